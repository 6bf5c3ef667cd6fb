import Foundation
import SampleSupport
import Tandem

/// The activity: an album that everyone in the session adds to.
struct SharedPhotos: GroupActivity {
    var metadata: GroupActivityMetadata {
        var metadata = GroupActivityMetadata()
        metadata.title = "Shared Photos"
        return metadata
    }
}

/// Follows the session's journal: fetches each photo as it appears (late joiners get everything
/// added so far), and notices each one removed.
@MainActor final class Album {
    let session: GroupSession<SharedPhotos>
    let journal: GroupSessionJournal
    private(set) var photos: [GroupSessionJournal.Attachment] = []

    init(session: GroupSession<SharedPhotos>) {
        self.session = session
        journal = GroupSessionJournal(session: session)
    }

    func follow() {
        Task {
            for await attachments in journal.attachments {
                let before = Set(photos.map(\.id))
                let now = Set(attachments.map(\.id))
                for removed in photos where !now.contains(removed.id) {
                    print("removed \(TerminalText.sanitized(removed.name))")
                }
                photos = attachments
                for added in attachments where !before.contains(added.id) {
                    await fetch(added)
                }
            }
        }
    }

    private func fetch(_ photo: GroupSessionJournal.Attachment) async {
        do {
            let data = try await photo.load(Data.self)
            print("photo \(TerminalText.sanitized(photo.name)): \(data.count) bytes, sha256 \(SHA256.hex(of: data)), from \(TerminalText.sanitized(ownerName(photo)))")
        } catch {
            print("could not load \(TerminalText.sanitized(photo.name)): \(TerminalText.sanitized("\(error)"))")
        }
    }

    private func ownerName(_ photo: GroupSessionJournal.Attachment) -> String {
        if photo.owner == session.localParticipant.id { return "you" }
        return session.activeParticipants.first { $0.id == photo.owner }?.displayName ?? "someone who has left"
    }

    func add(_ path: String) async throws {
        let attachment = try await journal.add(URL(fileURLWithPath: path))
        print("added \(TerminalText.sanitized(attachment.name)) (\(attachment.size) bytes)")
    }

    func remove(_ name: String) async throws {
        guard let photo = photos.first(where: { $0.name == name }) else {
            print("no photo named \(name)")
            return
        }
        try await journal.remove(attachment: photo)
    }

    func list() {
        print("album: \(photos.isEmpty ? "(empty)" : photos.map { "\($0.name) (\($0.size) bytes)" }.joined(separator: ", "))")
    }
}

await SampleLaunch.run("SharedPhotos") { launch in
    let session = try await launch.session(of: SharedPhotos())
    let album = Album(session: session)
    try await session.joinAndWait()
    if launch.isHosting { print(session.invitation.url.absoluteString) }
    print("joined as \(launch.name): add PATH, remove NAME, list, quit, end")
    album.follow()
    Task {
        for await change in session.participantChanges {
            for participant in change.joined { print("joined: \(participant.printableName)") }
            for participant in change.left { print("left: \(participant.printableName)") }
        }
    }

    let commands = Task {
        for await line in InputLines() {
            let (verb, rest) = InputLines.command(line)
            do {
                switch verb {
                case "add": try await album.add(rest)
                case "remove": try await album.remove(rest)
                case "list": album.list()
                case "quit", "leave": session.leave()
                case "end": session.end()
                default: print("unknown command '\(verb)' (add PATH, remove NAME, list, quit, end)")
                }
            } catch {
                print("could not \(verb) \(rest): \(TerminalText.sanitized("\(error)"))")
            }
        }
        session.leave()
    }
    await session.waitUntilOver()
    commands.cancel()
}
