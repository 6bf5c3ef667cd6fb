import Foundation
import Testing
import Tandem

/// A value sent through a proxy: its name, as text.
struct Tag: Transferable, Equatable {
    var name: String
    static var transferRepresentation: some TransferRepresentation {
        ProxyRepresentation(exporting: { (tag: Tag) in tag.name }, importing: { (name: String) in Tag(name: name) })
    }
}

/// A value with two representations: JSON preferred, plain text exported only.
struct Memo: Codable, Transferable, Equatable {
    var text: String
    static var transferRepresentation: some TransferRepresentation {
        CodableRepresentation(contentType: .json)
        DataRepresentation(exportedContentType: .plainText) { memo in Data(memo.text.utf8) }
    }
}

/// The journal's `Transferable` items on a session: each representation round trips, with its
/// content type, and a type that cannot import an attachment says so.
@Suite struct TransferableIOTests {
    @Test func itemsRoundTripThroughTheJournalByTheirRepresentations() async throws {
        let hosted = try await SessionIOTests.host(.inMemory)
        defer { hosted.relay.shutDown() }
        let journal = GroupSessionJournal(session: hosted.session)

        let text = try await journal.add("héllo")
        #expect(text.contentType == .utf8PlainText)
        #expect(try await text.load(String.self) == "héllo")
        #expect(try await text.load(Data.self) == Data("héllo".utf8))

        let tag = try await journal.add(Tag(name: "beach"), metadata: ["album": "summer"])
        #expect(try await tag.load(Tag.self) == Tag(name: "beach"))
        #expect(try await tag.loadMetadata(of: [String: String].self) == ["album": "summer"])

        let memo = try await journal.add(Memo(text: "buy milk"))
        #expect(memo.contentType == .json)
        #expect(try await memo.load(Memo.self) == Memo(text: "buy milk"))
        await #expect(throws: GroupSessionError.self) { try await memo.load(Tag.self) }

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-transfer-\(UUID().uuidString).bin")
        try Data([1, 2, 3, 4]).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let sent = try await journal.add(file)
        #expect(sent.name == file.lastPathComponent && sent.size == 4)
        let received = try await sent.load(URL.self)
        defer { try? FileManager.default.removeItem(at: received) }
        #expect(received != file)
        #expect(try Data(contentsOf: received) == Data([1, 2, 3, 4]))
        hosted.session.end()
    }

    @Test func aMissingFileIsAClearErrorAndTheJournalGoesOn() async throws {
        let hosted = try await SessionIOTests.host(.inMemory)
        defer { hosted.relay.shutDown() }
        let journal = GroupSessionJournal(session: hosted.session)
        let error = await #expect(throws: GroupSessionError.self) {
            try await journal.add(URL(fileURLWithPath: "/nonexistent/tandem/photo.png"))
        }
        #expect(error?.code == .encoding)
        #expect(try await journal.add(Data([9])).size == 1)
        hosted.session.end()
    }
}
