import Foundation
import Testing
import Tandem

// MARK: The pattern: sharing pictures through the journal, as SharePlay's documentation has it
// (`add(_:metadata:)`, `attachments`, `load(_:)`, `loadMetadata(of:)`, `remove(attachment:)`).

struct PhotoAlbum: GroupActivity {
    static let activityIdentifier = "com.example.tandem.compat.photo-album"
}

struct Photo: Transferable {
    var pngData: Data

    static var transferRepresentation: some TransferRepresentation {
        DataRepresentation(contentType: .png) { photo in
            photo.pngData
        } importing: { data in
            Photo(pngData: data)
        }
    }
}

struct PhotoDetails: Codable, Equatable {
    var caption: String
    var takenBy: String
}

struct Caption: Codable, Transferable {
    var text: String

    static var transferRepresentation: some TransferRepresentation {
        CodableRepresentation(contentType: .json)
    }
}

final class AlbumModel {
    let journal: GroupSessionJournal
    let screen: Screen
    var task: Task<Void, Never>?

    init(session: GroupSession<PhotoAlbum>, screen: Screen) {
        journal = GroupSessionJournal(session: session)
        self.screen = screen
    }

    func observe() {
        let journal = journal
        let screen = screen
        task = Task {
            for await attachments in journal.attachments {
                screen.show("attachments \(attachments.count)")
                for attachment in attachments {
                    do {
                        let photo = try await attachment.load(Photo.self)
                        let details = try await attachment.loadMetadata(of: PhotoDetails.self)
                        screen.show("photo \(photo.pngData.count) bytes: \(details.caption) by \(details.takenBy)")
                    } catch {
                        screen.show("cannot load: \(error)")
                    }
                }
            }
        }
    }

    func share(_ photo: Photo, caption: String, by name: String) async throws -> GroupSessionJournal.Attachment {
        try await journal.add(photo, metadata: PhotoDetails(caption: caption, takenBy: name))
    }

    func delete(_ attachment: GroupSessionJournal.Attachment) async throws {
        try await journal.remove(attachment: attachment)
    }
}

// MARK: The test: the host shares, a guest and a late joiner see and load it, then it is removed.

@Suite struct JournalPatternIOTests {
    @Test func picturesWithMetadataReachEveryoneAndGo() async throws {
        let host = try Harness.participant("host")
        var sessions = host.sessions(for: PhotoAlbum.self).makeAsyncIterator()
        try await host.start(PhotoAlbum())
        let session = try #require(await sessions.next())
        session.join()
        try await until(session.$state.values, "joined") { if case .joined = $0 { true } else { false } }
        let hostScreen = Screen()
        let hostAlbum = AlbumModel(session: session, screen: hostScreen)
        hostAlbum.observe()

        let png = Data([0x89, 0x50, 0x4E, 0x47] + Array(repeating: 7, count: 1000))
        let attachment = try await hostAlbum.share(Photo(pngData: png), caption: "the bay", by: "host")
        #expect(attachment.contentType == .png)
        try await hostScreen.waitFor("the host's own photo") { $0 == "photo 1004 bytes: the bay by host" }

        let late = try await Harness.join(session.invitation, on: try Harness.participant("late"), as: PhotoAlbum.self)
        let lateScreen = Screen()
        let lateAlbum = AlbumModel(session: late, screen: lateScreen)
        lateAlbum.observe()
        try await lateScreen.waitFor("the photo at the late joiner") { $0 == "photo 1004 bytes: the bay by host" }

        // A codable item, and a type that cannot import it: SharePlay's kind of error, said clearly.
        let caption = try await lateAlbum.journal.add(Caption(text: "hello"))
        #expect(try await caption.load(Caption.self).text == "hello")
        await #expect(throws: GroupSessionError.self) { try await caption.load(Photo.self) }
        await #expect(throws: GroupSessionError.self) { try await caption.loadMetadata(of: PhotoDetails.self) }

        try await hostAlbum.delete(attachment)
        try await hostAlbum.delete(caption)
        try await lateScreen.waitFor("both removed") { $0 == "attachments 0" }
        late.leave()
        session.end()
    }

    @Test func overTheLimitIsRefusedBeforeSending() async throws {
        let host = try Harness.participant("big")
        var sessions = host.sessions(for: PhotoAlbum.self).makeAsyncIterator()
        try await host.start(PhotoAlbum())
        let session = try #require(await sessions.next())
        session.join()
        try await until(session.$state.values, "joined") { if case .joined = $0 { true } else { false } }
        #expect(GroupSessionJournal.maximumAttachmentSize == 104_857_600)
        let journal = GroupSessionJournal(session: session)
        let error = await #expect(throws: GroupSessionError.self) {
            try await journal.add(Data(count: GroupSessionJournal.maximumAttachmentSize + 1))
        }
        #expect(error?.code == .tooLarge)
        session.end()
    }
}
