import Foundation
import Synchronization
import Testing
import Tandem
import TandemClock
import TandemNet
import TandemPlayback
import TandemTestKit
import TandemMpv

/// A real headless mpv reading a stream that runs dry: the long clip as a byte source (served to
/// mpv over HTTP on loopback by `MpvByteServer`) whose bytes past the first fifth of the media
/// data are held back until the test lets them through. mpv plays what it has, then waits for its
/// cache (`paused-for-cache`); the group waits for it as for the built-in player's stalls, and
/// plays on once mpv has its cache again.
@Suite(.serialized, .timeLimit(.minutes(1))) struct MpvStallProcessTests {
    @Test func anMpvWhoseStreamRunsDryHoldsTheGroupUntilItsCacheIsBack() async throws {
        let clip = try MpvFixture.longClip()
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: clip)))
        let media = try #require(GatedByteSource.mediaData(in: bytes), "no mdat box in the clip")
        let source = GatedByteSource(bytes, held: (media.lowerBound + Int64(media.count) / 5)..<media.upperBound)
        defer { source.release() }
        let item = URL(fileURLWithPath: clip).lastPathComponent
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let builtin = try MpvGroup.builtin(clip)
        defer { builtin.close() }
        let mpv = try await MpvPlayer.launch(item: PlaybackItem(bytes: source, identifier: item), options: MpvFixture.headless())
        do {
            let host = try await MpvGroup.member("host", relay: relay, item: item, invitation: nil, coordinator: builtin.playbackCoordinator)
            let guest = try await MpvGroup.member("mpv", relay: relay, item: item, invitation: host.session.invitation,
                                                  coordinator: mpv.playbackCoordinator)
            try host.coordinator.transitionToItem(identifier: item)
            #expect(await awaitTimeline(of: guest.coordinator) { $0.item == item })
            host.coordinator.coordinateRateChange(to: 1)

            // mpv plays the four seconds it has, then waits for its cache: a stall the group waits for.
            #expect(await eventually(20) { mpv.statistics.stalls == 1 }, "mpv never stalled: \(mpv.statistics)")
            #expect(await eventually { host.coordinator.core.isWaiting }, "the group did not wait for mpv")
            #expect(host.coordinator.core.suspensions.contains { $0.reason == .stallRecovery && $0.holdsGroup })
            #expect(mpv.timeControlStatus == .waitingToPlayAtSpecifiedRate)

            // The rest of the stream arrives: the suspension ends and the group plays on, mpv with it.
            source.release()
            #expect(await eventually(15) { !host.coordinator.core.isWaiting }, "the group still waits")
            #expect(mpv.playbackCoordinator.suspensionReasons.isEmpty)
            #expect(host.coordinator.timeline.rate == 1)
            let other = try MpvConnection(path: mpv.ipcPath)
            defer { other.close() }
            // Back on the group's timeline once the group's play has taken effect (its pre-roll
            // gate may wait a second for the others): four readings in a row within the tolerance.
            var errors: [Int64] = []
            let onTimeline = await eventually(8) {
                errors = (try? await MpvCoordinationProcessTests.errors(of: other, against: guest.coordinator, count: 4)) ?? []
                return errors.count == 4 && errors.allSatisfy { abs($0) < MpvCoordinationProcessTests.tolerance }
            }
            #expect(onTimeline, "errors after the stall (ms): \(MpvCoordinationProcessTests.milliseconds(errors)), \(mpv.statistics)")
        } catch {
            await mpv.close()
            throw error
        }
        await mpv.close()
    }
}

/// Bytes in memory whose range `held` is held back: a read there blocks until `release()`, as a
/// stream that stops arriving would.
final class GatedByteSource: SeekableByteSource {
    private let bytes: [UInt8]
    private let held: Range<Int64>
    /// Whether the held range is let through; under `condition`.
    private let open = Mutex(false)
    private let condition = NSCondition()

    init(_ bytes: [UInt8], held: Range<Int64>) {
        self.bytes = bytes
        self.held = held
    }

    var size: Int64? { Int64(bytes.count) }

    /// Lets every held read through.
    func release() {
        condition.lock()
        open.withLock { $0 = true }
        condition.broadcast()
        condition.unlock()
    }

    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset >= 0, offset < Int64(bytes.count) else { return 0 }
        var end = min(Int64(bytes.count), offset + Int64(buffer.count))
        if held.contains(offset) {
            condition.lock()
            // Until the test releases it (its `defer` does, whatever happens).
            while !open.withLock({ $0 }) { _ = condition.wait(until: Date().addingTimeInterval(1)) }
            condition.unlock()
        } else if !open.withLock({ $0 }), offset < held.lowerBound {
            // Up to the held range only, so that the read before it does not run on into it.
            end = min(end, held.lowerBound)
        }
        let count = Int(end - offset)
        bytes.withUnsafeBytes { source in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[Int(offset)..<Int(end)]))
        }
        return count
    }

    /// The byte range of the media data (`mdat` box) of an MP4 file, from its top-level boxes.
    static func mediaData(in bytes: [UInt8]) -> Range<Int64>? {
        var offset = 0
        // Bounded: each step moves past a box of at least 8 bytes.
        while offset + 8 <= bytes.count {
            let size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            guard size >= 8 else { return nil }
            if type == "mdat" { return Int64(offset + 8)..<Int64(min(bytes.count, offset + size)) }
            offset += size
        }
        return nil
    }
}
