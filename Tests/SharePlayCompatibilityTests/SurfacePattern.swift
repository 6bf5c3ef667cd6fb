import Foundation
import Testing
import Tandem

// MARK: The pattern: the members the other patterns do not reach, as Apple's documentation
// writes them: an activity that leaves its identifier to the default, metadata with every
// field, every activity type, a send with a completion handler, a session's id and state.

struct Meditation: GroupActivity {
    var minutes: Int

    var metadata: GroupActivityMetadata {
        var metadata = GroupActivityMetadata()
        metadata.title = NSLocalizedString("Meditate together", comment: "Title of group activity")
        metadata.subtitle = "\(minutes) minutes"
        metadata.fallbackURL = URL(string: "https://example.com/meditation")
        metadata.type = .generic
        return metadata
    }
}

struct Bell: Codable {
    var strikes: Int
}

@MainActor
final class MeditationRoom {
    let screen: Screen
    var messenger: GroupSessionMessenger?

    init(screen: Screen) { self.screen = screen }

    func ring(_ strikes: Int) {
        messenger?.send(Bell(strikes: strikes), to: .all) { error in
            if let error {
                self.screen.show("the bell did not ring: \(error)")
            } else {
                self.screen.show("rang \(strikes)")
            }
        }
    }
}

struct SlideShow: GroupActivity {
    var deck: String

    var metadata: GroupActivityMetadata {
        var metadata = GroupActivityMetadata()
        metadata.title = deck
        metadata.type = .createTogether
        // The slides are the initiator's: the activity ends when they leave.
        metadata.lifetimePolicy = .endsWhenInitiatorLeaves
        return metadata
    }
}

struct Bells: GroupActivity {}

struct Headline: Transferable {
    var text: String

    static var transferRepresentation: some TransferRepresentation {
        ProxyRepresentation(exporting: \.text)
        ProxyRepresentation(importing: { (text: String) in Headline(text: text) })
    }
}

struct Tour: GroupActivity, Transferable {
    var city: String
}

struct Postcard: Transferable {
    var city: String

    static var transferRepresentation: some TransferRepresentation {
        GroupActivityTransferRepresentation { postcard in
            Tour(city: postcard.city)
        }
    }
}

struct Gallery: GroupActivity {}

struct Slide: Transferable {
    var number: Int
    var png: Data?
    var text: String

    static var transferRepresentation: some TransferRepresentation {
        DataRepresentation(exportedContentType: .png) { slide in
            slide.png ?? Data()
        }
        .suggestedFileName("slide.png")
        .exportingCondition { slide in slide.png != nil }
        DataRepresentation(exportedContentType: .plainText) { slide in
            Data(slide.text.utf8)
        }
        .suggestedFileName { slide in "slide-\(slide.number).txt" }
    }
}

// MARK: The test

@MainActor
@Suite struct SharePlayCompatibilityIOTests {
    @Test func anActivityMayLeaveItsIdentifierToTheDefaultAndItsMetadataHasApplesFields() {
        #expect(Meditation.activityIdentifier.hasSuffix("Meditation"))
        let metadata = Meditation(minutes: 10).metadata
        #expect(metadata.title == "Meditate together")
        #expect(metadata.subtitle == "10 minutes")
        #expect(metadata.fallbackURL?.host == "example.com")
        #expect(metadata.type == .generic)
        let types: [GroupActivityMetadata.ActivityType] = [.generic, .watchTogether, .listenTogether, .createTogether, .exploreTogether,
                                                           .learnTogether, .readTogether, .shopTogether, .workoutTogether]
        #expect(Set(types.map { "\($0)" }).count == types.count)
    }

    /// Bounded in time: the guest's reading ends only with the bell.
    @Test(.timeLimit(.minutes(1))) func aSendWithACompletionHandlerIsToldWhenItIsSentAndTheSessionSaysWhoAndWhat() async throws {
        _ = try Harness.configureShared()
        let screen = Screen()
        let room = MeditationRoom(screen: screen)
        _ = try await Meditation(minutes: 5).activate()
        var sessions = Meditation.sessions().makeAsyncIterator()
        let session = try #require(await sessions.next())
        session.join()
        try await until(session.$state.values, "joined") { if case .joined = $0 { true } else { false } }
        if case .joined = session.state {} else { Issue.record("state \(session.state)") }
        room.messenger = GroupSessionMessenger(session: session)

        let guest = try await Harness.join(session.invitation, on: try Harness.participant("ana"), as: Meditation.self)
        #expect(guest.id == session.id)
        try await until(session.$activeParticipants.values, "two present") { $0.count == 2 }
        let everyone = Set(session.activeParticipants)
        #expect(everyone.contains(session.localParticipant) && everyone.contains(guest.localParticipant))
        #expect(session.localParticipant.id != guest.localParticipant.id)

        let guestMessenger = GroupSessionMessenger(session: guest)
        let bells = guestMessenger.messages(of: Bell.self)
        let heard = Task {
            for await (bell, context) in bells {
                return (bell.strikes, context.source == session.localParticipant)
            }
            return (0, false)
        }
        room.ring(3)
        try await screen.waitFor("the completion") { $0.hasPrefix("rang") || $0.hasPrefix("the bell") }
        #expect(screen.shown.contains("rang 3"))
        let (strikes, fromHost) = await heard.value
        #expect(strikes == 3 && fromHost)

        guest.leave()
        session.end()
        try await until(session.$state.values, "invalidated") { if case .invalidated = $0 { true } else { false } }
    }

    /// Bounded in time: the notices are read until the two shown arrive.
    @Test(.timeLimit(.minutes(1))) func noticesAreShownHereAndNearbyIsFalse() async throws {
        _ = try Harness.configureShared()
        _ = try await Bells().activate()
        var sessions = Bells.sessions().makeAsyncIterator()
        let groupSession = try #require(await sessions.next())
        groupSession.join()
        try await until(groupSession.$state.values, "joined") { if case .joined = $0 { true } else { false } }
        #expect(!groupSession.localParticipant.isNearbyWithLocalParticipant)
        var notices = groupSession.notices.makeAsyncIterator()

        // Apple's own example, and an event of Apple's shape.
        groupSession.showNotice(.updatedQueue(.added(.song("Here comes the sun"))))
        groupSession.showNotice(GroupSessionEvent(originator: groupSession.localParticipant, action: .pause, url: nil))
        let first = try #require(await notices.next())
        #expect(first.originator == groupSession.localParticipant)
        #expect(first.action == .updatedQueue(.added(.song("Here comes the sun"))))
        #expect(first.description.hasSuffix("added Here comes the sun to the queue"))
        let second = try #require(await notices.next())
        #expect(second.action == .pause && second.url == nil)
        groupSession.end()
        #expect(await notices.next() == nil, "the notices end with the session")
    }

    @Test func anActivityThatEndsWhenItsInitiatorLeavesEndsForEveryone() async throws {
        _ = try Harness.configureShared()
        #expect(SlideShow(deck: "q3").metadata.lifetimePolicy == .endsWhenInitiatorLeaves)
        #expect(Meditation(minutes: 1).metadata.lifetimePolicy == .automatic)
        _ = try await SlideShow(deck: "q3").activate()
        var sessions = SlideShow.sessions().makeAsyncIterator()
        let session = try #require(await sessions.next())
        session.join()
        try await until(session.$state.values, "joined") { if case .joined = $0 { true } else { false } }
        let guest = try await Harness.join(session.invitation, on: try Harness.participant("ben"), as: SlideShow.self)
        try await until(guest.$activeParticipants.values, "two present") { $0.count == 2 }

        session.leave()
        let ended = try await until(guest.$state.values, "the guest's session ends") { if case .invalidated = $0 { true } else { false } }
        guard case .invalidated(let reason) = ended else { return }
        #expect(reason.code == .ended, "\(reason)")
    }

    @Test func aSlideExportsItsFirstRepresentationWhoseConditionHoldsUnderItsSuggestedName() async throws {
        _ = try Harness.configureShared()
        #expect(UTType(filenameExtension: "png") == .png)
        #expect(UTType(filenameExtension: "JPG") == .jpeg)
        #expect(UTType(filenameExtension: "mp3", conformingTo: .audio) == .mp3)
        #expect(UTType(filenameExtension: "mp3", conformingTo: .image) == nil)
        #expect([UTType.gif, .heic].allSatisfy { $0.conforms(to: .image) })
        #expect([UTType.mp3, .wav].allSatisfy { $0.conforms(to: .audio) })
        #expect(UTType.html.conforms(to: .text) && UTType.zip.conforms(to: .data))

        _ = try await Gallery().activate()
        var sessions = Gallery.sessions().makeAsyncIterator()
        let session = try #require(await sessions.next())
        session.join()
        try await until(session.$state.values, "joined") { if case .joined = $0 { true } else { false } }
        let journal = GroupSessionJournal(session: session)
        let picture = try await journal.add(Slide(number: 1, png: Data([0x89, 0x50, 0x4E, 0x47]), text: "one"))
        #expect(picture.name == "slide.png" && picture.contentType == .png)
        let words = try await journal.add(Slide(number: 2, png: nil, text: "two"))
        #expect(words.name == "slide-2.txt" && words.contentType == .plainText)
        // A proxy that only imports: the headline is read back from what was sent as a string.
        let sent = try await journal.add(Headline(text: "three"))
        #expect(try await sent.load(Headline.self).text == "three")
        session.end()
    }

    @Test func aGroupActivityIsSharedByTheInviteItsTransferRepresentationExports() async throws {
        _ = try Harness.configureShared()
        #expect(Tour.transferRepresentation.transferRepresentations.map(\.contentType) == [.url], "the default for a Transferable activity")
        let ways = Postcard.transferRepresentation.transferRepresentations as? [TransferWay<Postcard>]
        let way = try #require(ways?.first)
        #expect(way.contentType == .url && way.import == nil)
        guard case .data(let bytes)? = try await way.export?(Postcard(city: "Rome")) else {
            Issue.record("no invite exported")
            return
        }
        let invitation = try Invitation(parsing: String(decoding: bytes, as: UTF8.self))

        // Exporting activated the tour: its session arrives as `activate()`'s does.
        var sessions = Tour.sessions().makeAsyncIterator()
        let session = try #require(await sessions.next())
        #expect(session.activity.city == "Rome" && session.invitation == invitation)
        session.join()
        try await until(session.$state.values, "joined") { if case .joined = $0 { true } else { false } }
        let guest = try await Harness.join(invitation, on: try Harness.participant("cleo"), as: Tour.self)
        #expect(guest.activity.city == "Rome")
        guest.leave()
        session.end()
    }
}
