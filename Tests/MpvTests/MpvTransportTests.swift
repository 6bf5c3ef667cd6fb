import Foundation
import Synchronization
import Testing
import Tandem
import TandemClock
import TandemPlayback
import TandemIdentity
import TandemTestKit
@testable import TandemMpv

/// The mpv player's own transport with a real headless mpv: uncoordinated, `play()`, `pause()`,
/// `seek(to:)`, `setRate(_:)` and `replaceCurrentItem(with:)` change what mpv reports by the time
/// they return, and bad requests are refused with a clear error that leaves mpv as it was;
/// coordinated, two mpv players in one session follow each other's transport.
@Suite(.serialized, .timeLimit(.minutes(1))) struct MpvTransportProcessTests {
    /// An empty byte source, which mpv cannot open.
    final class Bytes: SeekableByteSource {
        var size: Int64? { 0 }
        func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int { 0 }
    }

    /// One headless mpv on `item` and another connection to its socket (how the tests watch it);
    /// mpv always stops.
    func withMpv(_ item: PlaybackItem, _ body: (MpvPlayer, MpvConnection) async throws -> Void) async throws {
        let mpv = try await MpvPlayer.launch(item: item, options: MpvFixture.headless(ipcPath: MpvFixture.socketPath()))
        do {
            let other = try MpvConnection(path: mpv.ipcPath)
            defer { other.close() }
            try await body(mpv, other)
        } catch {
            await mpv.close()
            throw error
        }
        await mpv.close()
        #expect(!mpv.process.isRunning)
    }

    /// mpv's `time-pos` (ns), read from outside.
    static func position(_ mpv: MpvConnection) async throws -> Int64 {
        let seconds = try #require(try await mpv.get("time-pos").double)
        return Int64((seconds * 1e9).rounded())
    }

    /// One frame of the long clip and a little (ns): an exact seek lands on the first frame at or
    /// after its target.
    static let frame: Int64 = 34_000_000

    @Test func uncoordinatedTransportIsDoneOnMpvByTheTimeItReturns() async throws {
        let clip = try MpvFixture.longClip()
        let otherClip = try MpvFixture.otherClip()
        try await withMpv(PlaybackItem(file: clip)) { mpv, other in
            #expect(mpv.itemIdentifier == "long-20s.mp4" && mpv.currentItemIdentifier == "long-20s.mp4")
            #expect(mpv.duration.map { abs($0 - 20_000_000_000) < 100_000_000 } == true, "duration \(String(describing: mpv.duration))")
            #expect(mpv.currentItemIdentity?.hasPrefix("d=20.0") == true, "identity \(String(describing: mpv.currentItemIdentity))")
            #expect(try await other.get("pause").bool == true)

            try await mpv.play(rate: 1)
            #expect(try await other.get("pause").bool == false)
            #expect(try await other.get("speed").double == 1)
            #expect(await other.awaitPosition { $0 > 200_000_000 }, "mpv plays")

            try await mpv.setRate(1.5)
            #expect(try await other.get("speed").double == 1.5)
            #expect(try await other.get("pause").bool == false)

            try await mpv.setRate(0)
            #expect(try await other.get("pause").bool == true)

            try await mpv.setPosition(7_000_000_000)
            let landed = try await Self.position(other)
            #expect(landed >= 7_000_000_000 - 5_000_000 && landed < 7_000_000_000 + Self.frame, "landed at \(landed)")

            // Past the end: at the end.
            try await mpv.setPosition(60_000_000_000)
            let end = try await Self.position(other)
            #expect(end > 19_900_000_000, "past the end landed at \(end)")
            try await mpv.setPosition(7_000_000_000)
            #expect(abs(try await Self.position(other) - 7_000_000_000) < Self.frame)

            // Playing again at another rate, from where it is.
            try await mpv.play(rate: 0.5)
            #expect(try await other.get("pause").bool == false)
            #expect(try await other.get("speed").double == 0.5)
            try await mpv.setRate(0)
            #expect(try await other.get("pause").bool == true)

            try await mpv.replaceCurrentItem(with: PlaybackItem(file: otherClip))
            #expect(try await other.get("path").string == otherClip)
            #expect(mpv.itemIdentifier == "other-10s.mp4" && mpv.currentItemIdentifier == "other-10s.mp4")
            #expect(mpv.currentItem.identifier == "other-10s.mp4")
            #expect(mpv.duration.map { abs($0 - 10_000_000_000) < 100_000_000 } == true, "duration \(String(describing: mpv.duration))")
            #expect(mpv.currentItemIdentity?.hasPrefix("d=10.0") == true, "identity \(String(describing: mpv.currentItemIdentity))")
            // At the new item's start, paused as before.
            #expect(try await other.get("pause").bool == true)
            #expect(try await Self.position(other) < Self.frame)
            #expect(mpv.availableItemIdentifiers == ["long-20s.mp4", "other-10s.mp4"])

            try await mpv.play(rate: 1)
            #expect(await other.awaitPosition { $0 > 100_000_000 }, "the new item plays")
            try await mpv.setRate(0)
            // None of it was taken for a person's change.
            #expect(mpv.statistics.userProposals == 0)
            #expect(mpv.process.isRunning)
        }
    }

    /// AVPlayer's spelling: `play()`, `pause()`, `seek(to:)` and `rate` return at once, mpv
    /// carries them out in the order asked, `timeControlStatus` follows, and a bad request is
    /// published as `error` rather than thrown.
    @Test func applesTransportReturnsAtOnceAndPublishesFailures() async throws {
        let clip = try MpvFixture.longClip()
        try await withMpv(PlaybackItem(file: clip)) { mpv, other in
            #expect(mpv.timeControlStatus == .paused && mpv.rate == 0)
            mpv.seek(to: 4_000_000_000)
            mpv.play()
            #expect(await other.awaitProperty("pause") { $0.bool == false })
            let position = try await Self.position(other)
            #expect(position >= 4_000_000_000, "the seek came first: at \(position) ns")
            #expect(await awaitValue(mpv.$timeControlStatus.values) { $0 == .playing })
            #expect(mpv.rate == 1 && mpv.reasonForWaitingToPlay == nil)
            mpv.rate = 1.5
            #expect(await other.awaitProperty("speed") { $0.double == 1.5 })
            mpv.pause()
            #expect(await other.awaitProperty("pause") { $0.bool == true })
            #expect(await awaitValue(mpv.$timeControlStatus.values) { $0 == .paused })
            #expect(mpv.error == nil)

            mpv.rate = 9
            #expect(await awaitValue(mpv.$error.values) { $0 != nil })
            #expect(mpv.error?.isInvalidRequest == true, "\(String(describing: mpv.error))")
            let speed = try await other.get("speed").double
            #expect(speed == 1.5, "the refused rate left mpv as it was")
        }
    }

    @Test func badRequestsAreRefusedClearlyAndLeaveMpvAsItWas() async throws {
        let clip = try MpvFixture.longClip()
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let notMedia = try fixtures.write("notes.mp4", Array("these are not the frames you are looking for\n".utf8))
        try await withMpv(PlaybackItem(file: clip)) { mpv, other in
            for rate in [10, -1, 0.1, .nan, .infinity] {
                await #expect { try await mpv.setRate(rate) } throws: { error in
                    (error as? MpvError)?.isInvalidRequest == true && "\(error)".contains("rate")
                }
            }
            await #expect { try await mpv.play(rate: 0) } throws: { ($0 as? MpvError)?.isInvalidRequest == true }
            await #expect { try await mpv.setPosition(-1) } throws: { ($0 as? MpvError)?.isInvalidRequest == true }
            #expect(try await other.get("speed").double == 1)
            #expect(try await other.get("pause").bool == true)

            // An empty byte source: served to mpv, which cannot open it.
            await #expect { try await mpv.replaceCurrentItem(with: PlaybackItem(bytes: Bytes(), identifier: "stream")) } throws: { error in
                (error as? MpvError)?.isRefusal == true && "\(error)".contains("stream")
            }
            #expect(try await other.get("path").string == clip)
            await #expect { try await mpv.replaceCurrentItem(with: PlaybackItem(file: "/nonexistent/film.mp4")) } throws: { error in
                (error as? MpvError)?.isInvalidRequest == true && "\(error)".contains("/nonexistent/film.mp4")
            }
            #expect(try await other.get("path").string == clip)

            // A file mpv cannot open: mpv says so, and goes back to the item it had, where it was.
            try await mpv.setPosition(4_000_000_000)
            await #expect { try await mpv.replaceCurrentItem(with: PlaybackItem(file: notMedia)) } throws: { error in
                (error as? MpvError)?.isRefusal == true && "\(error)".contains("could not open")
            }
            #expect(mpv.process.isRunning)
            #expect(try await other.get("path").string == clip)
            #expect(mpv.itemIdentifier == "long-20s.mp4")
            #expect(mpv.lastItemError != nil)
            let back = try await Self.position(other)
            #expect(back >= 4_000_000_000 - 5_000_000 && back < 4_000_000_000 + Self.frame, "back at \(back)")
            try await mpv.play(rate: 1)
            #expect(await other.awaitPosition { $0 > 4_100_000_000 }, "mpv still plays its item")
            try await mpv.setRate(0)
            #expect(mpv.statistics.userProposals == 0)
        }
    }

    @Test func aURLIsGivenOverIPCNeverOnTheCommandLine() async throws {
        // A URL goes to mpv as it is (and without the local file's restrictions), over its IPC
        // socket: here nothing listens, mpv quits, and the error names no URL in the command line.
        let url = try PlaybackItem(url: #require(URL(string: "http://127.0.0.1:9/film.mp4?token=SECRET")))
        var options = MpvFixture.headless()
        options.startTimeout = .seconds(5)
        await #expect { try await MpvPlayer.launch(item: url, options: options) } throws: { error in
            let text = "\(error)"
            let commandLine = text.components(separatedBy: ": ").first ?? text
            return text.contains("cannot run mpv") && commandLine.contains("--idle=once") && !commandLine.contains("SECRET")
                && !commandLine.contains("--ytdl=no")
        }
        // An empty byte source: mpv cannot open what it is served, and says so.
        await #expect { try await MpvPlayer.launch(item: PlaybackItem(bytes: Bytes(), identifier: "stream"), options: options) }
            throws: { error in "\(error)".contains("cannot run mpv") && "\(error)".contains("--access-references=no") }
    }

    /// A file read through a byte source (as a streamed item is read from its holders).
    final class FileBytes: SeekableByteSource {
        let handle: FileHandle
        let size: Int64?
        let reads = Mutex(0)
        init(_ path: String) throws {
            handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            size = try (FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
        }
        func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            reads.withLock { $0 += 1 }
            return pread(handle.fileDescriptor, buffer.baseAddress, buffer.count, off_t(offset))
        }
    }

    /// The arguments of process `pid`, as `ps` shows them to every local user.
    static func commandLine(of pid: pid_t) throws -> String {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))
        return String(decoding: bytes.map { $0 == 0 ? 32 : $0 }, as: UTF8.self)
    }

    @Test func aByteSourceIsServedToMpvOnLoopbackUnderASecretPathNoCommandLineShows() async throws {
        let clip = try MpvFixture.longClip()
        let otherClip = try MpvFixture.otherClip()
        let source = try FileBytes(otherClip)
        let identity = try MediaIdentity.of(file: otherClip)
        let item = PlaybackItem(bytes: source, identifier: "streamed.mp4", identity: identity)
        var served: URL?
        try await withMpv(item) { mpv, other in
            let path = try #require(try await other.get("path").string)
            let url = try #require(URL(string: path))
            served = url
            #expect(url.scheme == "http" && url.host == "127.0.0.1" && url.path.hasSuffix("/streamed.mp4") && url.path.count == 1 + 32 + 1 + 12, "\(path)")
            let commandLine = try Self.commandLine(of: mpv.process.processIdentifier)
            #expect(!commandLine.contains("http") && !commandLine.contains(url.path) && commandLine.contains("--access-references=no"),
                    "\(commandLine)")
            // Rendered at display time (`time-pos` is the frame on screen, behind the elapsed
            // time): the fallback reading adds half a frame (10 s at 25 frames/s).
            #expect(commandLine.contains("--video-timing-offset=0"), "\(commandLine)")
            #expect(mpv.positionLead == -20_000_000)
            // The item's own identity, with the duration mpv read.
            #expect(mpv.itemIdentifier == "streamed.mp4")
            #expect(mpv.currentItemIdentity.map(ContentIdentity.content(of:)) == ContentIdentity.content(of: identity))
            #expect(mpv.duration.map { abs($0 - 10_000_000_000) < 100_000_000 } == true, "duration \(String(describing: mpv.duration))")
            try await mpv.play(rate: 1)
            #expect(await other.awaitPosition { $0 > 100_000_000 }, "the byte source plays")
            try await mpv.setPosition(8_000_000_000)
            #expect(try await Self.position(other) >= 7_990_000_000)
            // To a file and back to the byte source, which keeps its path.
            try await mpv.replaceCurrentItem(with: PlaybackItem(file: clip))
            #expect(try await other.get("path").string == clip)
            try await mpv.replaceCurrentItem(with: item)
            #expect(try await other.get("path").string == path)
            #expect(source.reads.withLock { $0 } > 0)
            try await mpv.setRate(0)
        }
        // Closed: the server is gone with mpv.
        let port = try #require(served?.port)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(connected != 0, "the byte server still listens after the player closed")
    }

    @Test func renderingAheadIsMpvsDefaultWhenAsked() async throws {
        var options = MpvFixture.headless()
        options.rendersAtDisplayTime = false
        let mpv = try await MpvPlayer.launch(item: PlaybackItem(file: try MpvFixture.longClip()), options: options)
        let commandLine = try Self.commandLine(of: mpv.process.processIdentifier)
        await mpv.close()
        #expect(!commandLine.contains("--video-timing-offset"), "\(commandLine)")
        // `time-pos` leads the elapsed time by half a frame on average (30 frames/s).
        #expect(mpv.positionLead == 16_666_666)
    }

    @Test func anHTTPItemIsOpenedByMpvAsItIs() async throws {
        let clip = try MpvFixture.longClip()
        let server = try LoopbackHTTPServer(serving: try MpvFixture.otherClip(), as: "clip.mp4")
        defer { server.stop() }
        let url = server.url("clip.mp4")
        let item = try PlaybackItem(url: url)
        try await withMpv(item) { mpv, other in
            #expect(try await other.get("path").string == url.absoluteString)
            #expect(mpv.itemIdentifier == "clip.mp4")
            #expect(mpv.duration.map { abs($0 - 10_000_000_000) < 100_000_000 } == true, "duration \(String(describing: mpv.duration))")
            #expect(mpv.currentItemIdentity == nil)
            try await mpv.play(rate: 1)
            #expect(await other.awaitPosition { $0 > 100_000_000 }, "the URL plays")

            // From the URL to a file and back.
            try await mpv.replaceCurrentItem(with: PlaybackItem(file: clip))
            #expect(try await other.get("path").string == clip)
            #expect(mpv.duration.map { abs($0 - 20_000_000_000) < 100_000_000 } == true)
            try await mpv.replaceCurrentItem(with: item)
            #expect(try await other.get("path").string == url.absoluteString)
            #expect(mpv.duration.map { abs($0 - 10_000_000_000) < 100_000_000 } == true)
            #expect(server.requests.count >= 2)
            try await mpv.setRate(0)
        }
    }

    // MARK: Coordinated

    /// mpv's error against its coordinator's timeline (ns; positive: ahead), read from outside:
    /// `audio-pts` at the round trip's midpoint.
    static func error(of mpv: MpvConnection, against coordinator: PlaybackCoordinator) async throws -> Int64? {
        let reply = try await mpv.command(["get_property", "audio-pts"])
        guard let seconds = reply.value.double, let expected = coordinator.expectedItemTime(atLocalTime: LocalInstant(nanoseconds: reply.midpoint)) else { return nil }
        return Int64((seconds * 1e9).rounded()) - expected.nanoseconds
    }

    /// How far from the timeline each mpv may be once it has started (ns): mpv starts to a
    /// fraction of a ms and is corrected beyond 1.5 ms; this is loose for a busy machine, and far
    /// tighter than an mpv that did not follow (it would be seconds off).
    static let tolerance: Int64 = 40_000_000

    /// Whether both of `players` (their outside connections and coordinators) are on the
    /// timeline, within `tolerance`; the errors for messages.
    static func onTimeline(_ players: [(MpvConnection, PlaybackCoordinator)]) async throws -> (Bool, [Double]) {
        var errors: [Double] = []
        for (mpv, coordinator) in players {
            guard let error = try await error(of: mpv, against: coordinator) else { return (false, errors) }
            errors.append(Double(error) / 1e6)
        }
        return (errors.allSatisfy { abs($0) < Double(tolerance) / 1e6 }, errors)
    }

    /// Two headless mpv players on the long clip in one session on the in-memory relay, the
    /// first having started it and put the group on the clip; `body` runs with both and their
    /// outside connections; both mpv always stop.
    func withTwo(_ body: (MpvPlayer, MpvPlayer, MpvConnection, MpvConnection) async throws -> Void) async throws {
        let clip = try MpvFixture.longClip()
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let first = try await MpvPlayer.launch(item: PlaybackItem(file: clip), options: MpvFixture.headless(ipcPath: MpvFixture.socketPath()))
        let second: MpvPlayer
        do {
            second = try await MpvPlayer.launch(item: PlaybackItem(file: clip), options: MpvFixture.headless(ipcPath: MpvFixture.socketPath()))
        } catch {
            await first.close()
            throw error
        }
        do {
            let item = first.itemIdentifier
            let host = try await MpvGroup.member("first", relay: relay, item: item, invitation: nil, coordinator: first.playbackCoordinator)
            let guest = try await MpvGroup.member("second", relay: relay, item: item, invitation: host.session.invitation,
                                                  coordinator: second.playbackCoordinator)
            try host.coordinator.transitionToItem(identifier: item)
            #expect(await awaitTimeline(of: guest.coordinator) { $0.item == item })
            let (a, b) = (try MpvConnection(path: first.ipcPath), try MpvConnection(path: second.ipcPath))
            defer {
                a.close()
                b.close()
            }
            try await body(first, second, a, b)
        } catch {
            await first.close()
            await second.close()
            throw error
        }
        await first.close()
        await second.close()
    }

    @Test func oneMpvsTransportMovesTheWholeGroup() async throws {
        let otherClip = try MpvFixture.otherClip()
        try await withTwo { first, second, a, b in
            let players = [(a, first.playbackCoordinator), (b, second.playbackCoordinator)]
            func both(_ property: String, _ condition: @escaping @Sendable (MpvValue) -> Bool) async -> Bool {
                await awaitProperty(property, on: [a, b], condition)
            }

            // play() on one: both play, on the timeline.
            try await first.play(rate: 1)
            #expect(await both("pause") { $0.bool == false })
            #expect(first.playbackCoordinator.timeline.rate == 1 && second.playbackCoordinator.timeline.rate == 1)
            try await Task.sleep(for: .seconds(1.5))
            let (playing, playingErrors) = try await Self.onTimeline(players)
            #expect(playing, "errors while playing (ms): \(playingErrors)")

            // seek(to:) on the other: both move there, and play on from there.
            try await second.setPosition(12_000_000_000)
            for player in [first, second] {
                #expect(await awaitTimeline(of: player.playbackCoordinator) { $0.anchorMediaTime.nanoseconds == 12_000_000_000 })
            }
            try await Task.sleep(for: .seconds(1))
            let (seeked, seekErrors) = try await Self.onTimeline(players)
            #expect(seeked, "errors after the seek (ms): \(seekErrors)")
            let (x, y) = (try await Self.position(a), try await Self.position(b))
            #expect(x > 12_000_000_000 && y > 12_000_000_000, "positions \(x), \(y)")

            // setRate(_:) on one: both at that speed.
            try await first.setRate(1.25)
            #expect(await awaitTimeline(of: second.playbackCoordinator) { $0.rate == 1.25 })
            #expect(await both("speed") { ($0.double ?? 0) > 1.2 && ($0.double ?? 0) < 1.3 })

            // pause() on the other: both pause on one frame.
            try await second.setRate(0)
            #expect(await both("pause") { $0.bool == true })
            let pausedAt = second.playbackCoordinator.timeline.anchorMediaTime
            for mpv in [a, b] {
                #expect(await mpv.awaitPosition { abs($0 - pausedAt.nanoseconds) < Self.frame })
            }

            // replaceCurrentItem(with:) on one: both switch, the other having the file.
            try second.makeAvailable(PlaybackItem(file: otherClip))
            try await first.replaceCurrentItem(with: PlaybackItem(file: otherClip))
            #expect(await both("path") { $0.string == otherClip })
            #expect(await eventually { first.currentItemIdentifier == "other-10s.mp4" && second.currentItemIdentifier == "other-10s.mp4" })
            #expect(first.playbackCoordinator.timeline.item == "other-10s.mp4" && second.playbackCoordinator.timeline.item == "other-10s.mp4")
            #expect(second.duration.map { abs($0 - 10_000_000_000) < 100_000_000 } == true)
            for mpv in [a, b] {
                #expect(await mpv.awaitPosition { $0 < Self.frame })
            }

            // And the new item plays for both, on the timeline.
            try await second.play(rate: 1)
            #expect(await both("pause") { $0.bool == false })
            try await Task.sleep(for: .seconds(1.5))
            let (switched, switchedErrors) = try await Self.onTimeline(players)
            #expect(switched, "errors on the new item (ms): \(switchedErrors)")

            // Coordinated, a bad request is refused before it reaches the group.
            await #expect { try await first.setRate(8) } throws: { ($0 as? MpvError)?.isInvalidRequest == true }
            await #expect { try await first.setPosition(3_600_000_000_000 * 48) } throws: { ($0 as? MpvError)?.isNotProposed == true }
            // Nothing Tandem did came back as a person's change.
            #expect(first.statistics.userProposals == 0 && second.statistics.userProposals == 0)
        }
    }

    @Test func anItemThatFailsToLoadForTheGroupIsKeptAndNotTriedAgain() async throws {
        let clip = try MpvFixture.longClip()
        let otherClip = try MpvFixture.otherClip()
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        // The second holds something under the new item's identifier that mpv cannot open.
        let notMedia = try fixtures.write("other-10s.mp4", Array("not a film\n".utf8))
        try await withTwo { first, second, a, b in
            try second.makeAvailable(PlaybackItem(file: notMedia))
            try await first.replaceCurrentItem(with: PlaybackItem(file: otherClip))
            #expect(await eventually { second.lastItemError != nil })
            #expect("\(second.lastItemError.map { "\($0)" } ?? "")".contains("could not open"))
            // The group plays on the new item: a command a second, and none loads the item again.
            try await first.play(rate: 1)
            #expect(await a.awaitProperty("pause") { $0.bool == false })
            try await Task.sleep(for: .seconds(2.5))
            #expect(second.items.withLock { $0.loads } == 1)
            #expect(second.process.isRunning)
            #expect(try await b.get("path").string == clip)
            #expect(second.currentItemIdentifier == "long-20s.mp4")
            #expect(second.statistics.userProposals == 0)
        }
    }

    @Test func anotherFileUnderTheSameIdentifierIsLoadedHere() async throws {
        let clip = try MpvFixture.longClip()
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let copy = try fixtures.write("long-20s.mp4", [UInt8](Data(contentsOf: URL(fileURLWithPath: clip))))
        try await withTwo { first, second, a, b in
            try await first.setPosition(6_000_000_000)
            #expect(await awaitTimeline(of: second.playbackCoordinator) { $0.anchorMediaTime.nanoseconds == 6_000_000_000 })
            try await first.replaceCurrentItem(with: PlaybackItem(file: copy))
            #expect(try await a.get("path").string == copy)
            #expect(first.currentItemIdentifier == "long-20s.mp4")
            // The group starts the item again, and the other keeps its own file.
            #expect(await awaitTimeline(of: second.playbackCoordinator) { $0.anchorMediaTime == .zero })
            #expect(await b.awaitPosition { $0 < Self.frame })
            #expect(try await b.get("path").string == clip)
        }
    }

    @Test func aParticipantWithoutTheNewItemStaysOnItsOwn() async throws {
        let otherClip = try MpvFixture.otherClip()
        try await withTwo { first, second, a, b in
            try await first.replaceCurrentItem(with: PlaybackItem(file: otherClip))
            #expect(await a.awaitProperty("path") { $0.string == otherClip })
            #expect(await awaitTimeline(of: second.playbackCoordinator) { $0.item == "other-10s.mp4" })
            try await Task.sleep(for: .milliseconds(500))
            // The second does not hold it: its commands for it are stale, and mpv keeps its file.
            #expect(try await b.get("path").string == (try MpvFixture.longClip()))
            #expect(second.currentItemIdentifier == "long-20s.mp4")
            #expect(second.lastItemError == nil)
        }
    }
}
