import Foundation
import Testing
import TandemIdentity
import TandemTestKit
import TandemMediaTypes
import TandemHarness

/// Playlists: folders in natural order, `.m3u` lists, and content identity
/// without FFmpeg; then a host with a folder and a joiner holding the same files under other
/// names, matched by identity, as real processes.
@Suite(.serialized) struct PlaylistProcessTests {
    /// A temporary folder with `files` (relative paths; a trailing `/` makes a folder).
    func folder(_ files: [String]) throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-list-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        for file in files {
            let path = (root as NSString).appendingPathComponent(file)
            if file.hasSuffix("/") {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            } else {
                try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try Data(file.utf8).write(to: URL(fileURLWithPath: path))
            }
        }
        return root
    }

    @Test func naturalOrderPutsEp2BeforeEp10() {
        let names = ["ep10.mp4", "ep2.mp4", "Ep1.mkv", "ep02.mp4", "ep1b.mp4", "ep1.mp4", "extra.mp4", "ep100.mp4", "10.mp4", "9.mp4"]
        #expect(names.sorted(by: MediaList.naturallyPrecedes)
            == ["9.mp4", "10.mp4", "Ep1.mkv", "ep1.mp4", "ep1b.mp4", "ep02.mp4", "ep2.mp4", "ep10.mp4", "ep100.mp4", "extra.mp4"])
        // A total order: nothing precedes itself, and of two different names one comes first.
        #expect(!MediaList.naturallyPrecedes("ep2.mp4", "ep2.mp4"))
        #expect(MediaList.naturallyPrecedes("ep02.mp4", "ep2.mp4") != MediaList.naturallyPrecedes("ep2.mp4", "ep02.mp4"))
    }

    @Test func aFolderGivesItsMediaFilesNotRecursivelyInNaturalOrder() throws {
        let root = try folder(["ep10.mp4", "ep2.MKV", "notes.txt", ".hidden.mp4", "cover.jpg", "season2/", "season2/ep3.mp4", "trailer.webm"])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let expansion = MediaList.expand([root])
        #expect(expansion.media == ["ep2.MKV", "ep10.mp4", "trailer.webm"].map { (root as NSString).appendingPathComponent($0) })
        #expect(expansion.problems.isEmpty)
        let empty = try folder(["readme.txt"])
        defer { try? FileManager.default.removeItem(atPath: empty) }
        #expect(MediaList.expand([empty]) == MediaList.Expansion(media: [], problems: ["\(empty): a folder with no media files"]))
    }

    @Test func anM3uListSkipsCommentsResolvesRelativePathsAndReportsWhatIsMissing() throws {
        let root = try folder(["a/one.mp4", "a/sub/", "b/two.mkv", "three.mp4"])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let two = (root as NSString).appendingPathComponent("b/two.mkv")
        let list = (root as NSString).appendingPathComponent("a/party.m3u8")
        try Data("\u{FEFF}#EXTM3U\r\n#EXTINF:10,One\r\none.mp4\r\n\r\n\(two)\r\n../three.mp4\ngone.mp4\nhttps://example.com/x.mp4\nsub\nfile://\(two)\n".utf8)
            .write(to: URL(fileURLWithPath: list))
        let missing = (root as NSString).appendingPathComponent("missing.mp4")
        let expansion = MediaList.expand([list, missing])
        let a = (root as NSString).appendingPathComponent("a")
        // A missing word of the command line is left for opening it to refuse, in one line.
        #expect(expansion.media == [(a as NSString).appendingPathComponent("one.mp4"), two,
                                    (a as NSString).appendingPathComponent("../three.mp4"), two, missing])
        #expect(expansion.problems == ["\(list):7: gone.mp4: no such file",
                                       "\(list):8: https://example.com/x.mp4 is a URL; lists name files here",
                                       "\(list):9: sub is a folder; lists name files"])
    }

    @Test func contentIdentityIsSizeAndHashesWhateverTheName() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let copy = fixtures.path("renamed.bin")
        try FileManager.default.copyItem(atPath: SampleClip.h264.path, toPath: copy)
        let identity = try ContentIdentity.of(file: SampleClip.h264.path)
        #expect(try ContentIdentity.of(file: copy) == identity)
        #expect(try ContentIdentity.of(file: SampleClip.h264BFrames.path) != identity)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: copy)[.size] as? Int)
        #expect(identity.hasPrefix("s=\(size);h="))
        // A player announces the duration it read; the content stays what matches.
        let announced = ContentIdentity.announcing(duration: 4, identity)
        #expect(announced == "d=4.000;" + identity)
        #expect(ContentIdentity.announcing(duration: 5.5, announced) == "d=5.500;" + identity)
        #expect(ContentIdentity.announcing(duration: nil, identity) == "d=0.000;" + identity)
        #expect(ContentIdentity.sameContent(announced, identity))
        #expect(!ContentIdentity.sameContent(announced, try ContentIdentity.of(file: SampleClip.h264BFrames.path)))
        #expect(!ContentIdentity.sameContent(nil, identity))
    }

    @Test func aJoinerMatchesTheHostsFolderByIdentityUnderOtherNames() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let hostFolder = fixtures.path("season")
        let joinerFolder = fixtures.path("mine")
        for path in [hostFolder, joinerFolder] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        // The host's folder: ep10 after ep2 (natural order), a note that is no media.
        try FileManager.default.copyItem(atPath: SampleClip.h264.path, toPath: hostFolder + "/ep2.mp4")
        try FileManager.default.copyItem(atPath: SampleClip.h264BFrames.path, toPath: hostFolder + "/ep10.mp4")
        try Data("notes".utf8).write(to: URL(fileURLWithPath: hostFolder + "/notes.txt"))
        // The joiner's: the same two under other names, listed the other way round, and one more.
        try FileManager.default.copyItem(atPath: SampleClip.h264BFrames.path, toPath: joinerFolder + "/a-second.mp4")
        try FileManager.default.copyItem(atPath: SampleClip.h264.path, toPath: joinerFolder + "/b-first.mp4")
        try FileManager.default.copyItem(atPath: SampleClip.vp9.path, toPath: joinerFolder + "/c-other.webm")
        func start(_ name: String, _ arguments: [String]) throws -> WatchProcess {
            try WatchProcess(executable: TandemProcess.executablePath,
                             arguments: arguments + ["--name", name, "--events", "json", "--presentation-log", fixtures.path("\(name).jsonl")],
                             name: name, acceptsCommands: true)
        }
        let host = try start("ana", ["host", hostFolder, "--bind", "127.0.0.1", "--port", "0"])
        defer { host.kill() }
        let invite = try #require(host.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(host.standardError)")
        // The joiner's folder in natural order starts with the group's second item: its player
        // takes b-first.mp4 for the first.
        let joiner = try start("ben", ["join", invite, joinerFolder])
        defer { joiner.kill() }
        #expect(host.waitUntil(timeout: 20) { $0.contains { $0.event == "participant-joined" } }, "\(joiner.standardError)")
        // The extra file matches nothing, said once.
        #expect(joiner.waitUntil(timeout: 20) { $0.contains { $0.event == "unmatched-media" } },
                "\(joiner.lines.suffix(8)) \(joiner.standardError) | host: \(host.lines.suffix(8))")
        #expect(host.send("play") != nil)
        Thread.sleep(forTimeInterval: 1.5)
        #expect(host.send("next") != nil)
        for process in [host, joiner] {
            #expect(process.waitUntil(timeout: 20) { $0.contains { $0.event == "item" && $0.identifier == "ep10.mp4" && $0.index == 1 } },
                    "\(process.name): \(process.lines.suffix(8))")
        }
        Thread.sleep(forTimeInterval: 1.5)
        #expect(host.send("end") != nil)
        host.closeInput()
        joiner.closeInput()
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
        #expect(joiner.waitForExit(timeout: 20) == 3, "\(joiner.standardError)")
        let unmatched = joiner.lines.filter { $0.contains(#""event":"unmatched-media""#) }
        #expect(unmatched.count == 1 && unmatched.first?.contains("c-other.webm") == true, "\(unmatched)")
        #expect(!joiner.events.contains { $0.event == "item-mismatch" }, "\(joiner.lines.filter { $0.contains("mismatch") })")
        #expect(!host.events.contains { $0.event == "item-mismatch" }, "\(host.lines.filter { $0.contains("mismatch") })")
        // The joiner presented its b-first.mp4 (25 frames a second) as the group's ep2.mp4 and
        // its a-second.mp4 (30) as ep10.mp4: told apart by their frames' spacing.
        let frames = try PresentationRecord.read(path: fixtures.path("ben.jsonl")).filter { $0.still != true }
        func spacing(_ item: String) -> Double? {
            let pts = frames.filter { $0.item == item }.map(\.pts)
            let steps = zip(pts, pts.dropFirst()).map { $1 - $0 }.sorted()
            return steps.isEmpty ? nil : steps[steps.count / 2]
        }
        #expect(spacing("ep2.mp4").map { abs($0 - 1.0 / 25) < 0.002 } == true, "\(String(describing: spacing("ep2.mp4")))")
        #expect(spacing("ep10.mp4").map { abs($0 - 1.0 / 30) < 0.002 } == true, "\(String(describing: spacing("ep10.mp4")))")
    }
}
