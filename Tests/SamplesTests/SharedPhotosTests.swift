import Foundation
import Testing

/// SharedPhotos with three processes: a photo added by one reaches everyone (a late joiner too)
/// byte for byte, removing it removes it everywhere, and the size limit is one clear line.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SharedPhotosProcessTests {
    /// A directory of test photos, removed at the end.
    final class Photos {
        let directory: URL
        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("shared-photos-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(at: directory) }

        /// A file of `size` pseudo-random bytes; returns its path.
        func make(_ name: String, size: Int) throws -> String {
            var generator = SystemRandomNumberGenerator()
            let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let url = directory.appendingPathComponent(name)
            try Data(bytes).write(to: url)
            return url.path
        }

        /// A sparse file of `size` bytes (nothing is written, so it is quick however large).
        func makeSparse(_ name: String, size: Int) throws -> String {
            let url = directory.appendingPathComponent(name)
            _ = FileManager.default.createFile(atPath: url.path, contents: nil)
            let handle = try FileHandle(forWritingTo: url)
            try handle.truncate(atOffset: UInt64(size))
            try handle.close()
            return url.path
        }
    }

    /// What `sha256sum` says of `path`.
    static func sha256sum(_ path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(String(decoding: data, as: UTF8.self).prefix(64))
    }

    @Test func photosReachEveryoneAndRemovingRemovesThemEverywhere() throws {
        let photos = try Photos()
        let cat = try photos.make("cat.png", size: 300_000)
        let dog = try photos.make("dog.jpg", size: 1_234)
        let catSum = try Self.sha256sum(cat)
        let dogSum = try Self.sha256sum(dog)

        let host = try SampleProcess("SharedPhotos", name: "host")
        let invite = try host.invite()
        let ana = try SampleProcess("SharedPhotos", name: "ana", relay: invite)
        #expect(host.waitFor("joined: ana") != nil, "\(host.transcript)")

        host.send("add \(cat)")
        #expect(host.waitFor("added cat.png (300000 bytes)") != nil, "\(host.transcript)")
        #expect(ana.waitFor("photo cat.png: 300000 bytes, sha256 \(catSum), from host") != nil, "\(ana.transcript)")
        #expect(host.waitFor("photo cat.png: 300000 bytes, sha256 \(catSum), from you") != nil, "\(host.transcript)")
        ana.send("add \(dog)")
        #expect(host.waitFor("photo dog.jpg: 1234 bytes, sha256 \(dogSum), from ana") != nil, "\(host.transcript)")

        // Bob comes late and gets both.
        let bob = try SampleProcess("SharedPhotos", name: "bob", relay: invite)
        #expect(bob.waitFor("photo cat.png: 300000 bytes, sha256 \(catSum)") != nil, "\(bob.transcript)")
        #expect(bob.waitFor("photo dog.jpg: 1234 bytes, sha256 \(dogSum)") != nil, "\(bob.transcript)")

        // Bob removes the cat: gone for everyone.
        bob.send("remove cat.png")
        for participant in [host, ana, bob] {
            #expect(participant.waitFor("removed cat.png") != nil, "\(participant.transcript)")
        }
        ana.send("list")
        #expect(ana.waitFor("album: dog.jpg (1234 bytes)") != nil, "\(ana.transcript)")

        host.send("end")
        for participant in [host, ana, bob] {
            #expect(participant.waitForExit() == 0, "\(participant.transcript)")
        }
    }

    @Test func aFileOverTheLimitIsRefusedWithOneClearLine() throws {
        let photos = try Photos()
        let limit = 100 * 1024 * 1024
        let huge = try photos.makeSparse("huge.tiff", size: limit + 1)
        let host = try SampleProcess("SharedPhotos", name: "host")
        let invite = try host.invite()
        let ana = try SampleProcess("SharedPhotos", name: "ana", relay: invite)
        #expect(host.waitFor("joined: ana") != nil, "\(host.transcript)")

        host.send("add \(huge)")
        #expect(host.waitFor("could not add \(huge): huge.tiff is \(limit + 1) bytes, over the limit of \(limit) bytes") != nil,
                "\(host.transcript)")
        host.send("add /nonexistent/photo.png")
        #expect(host.waitFor("could not add /nonexistent/photo.png: cannot read") != nil, "\(host.transcript)")
        host.send("remove nothing.png")
        #expect(host.waitFor("no photo named nothing.png") != nil, "\(host.transcript)")

        // Everything else still works.
        let small = try photos.make("small.gif", size: 10)
        host.send("add \(small)")
        #expect(ana.waitFor("photo small.gif: 10 bytes") != nil, "\(ana.transcript)")
        #expect(!ana.lines.contains { $0.contains("huge.tiff") }, "\(ana.transcript)")

        host.send("end")
        #expect(host.waitForExit() == 0, "\(host.transcript)")
        #expect(ana.waitForExit() == 0, "\(ana.transcript)")
    }
}
