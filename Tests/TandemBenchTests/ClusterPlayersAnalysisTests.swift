import Foundation
import Testing
import TandemParty
import TandemMediaTypes
import TandemHarness
import TandemMedia
@testable import TandemBench

/// `tandem bench cluster`'s players' figures on made-up runs: session time moved onto the logs'
/// raw clock, the window of frames all four showed, in step again after a relay was killed, and
/// which relay a process is connected to from `/proc/net/tcp`.
@Suite struct ClusterPlayersAnalysisIOTests {
    static func announced(_ version: Int, _ effective: Int64, rate: Double) -> WatchEvent {
        WatchEvent(.timeline(.init(version: version, rate: rate, mediaTime: 0, effectiveSessionNanoseconds: effective, item: ""),
                             .init(by: "", change: rate == 0 ? "pause" : "play")))
    }

    @Test func reliableLinesLostOrHeardTwiceAreCountedPerReceiverAndOwnLinesAreNot() {
        let sent = [["a0", "a1"], ["b0"], ["c0", "c1"]]
        // a heard its own line, everything of b and c; b missed c1 and heard a1 twice; c heard all.
        let heard = [["a0", "b0", "c0", "c1"], ["a0", "a1", "a1", "c0"], ["c0", "a0", "b0", "a1", "c1"]]
        let delivery = ClusterPlayersAnalysis.reliableDelivery(sent: sent, heard: heard)
        #expect(delivery.sent == 5)
        #expect(delivery.lost == 1)
        #expect(delivery.duplicated == 1)
        #expect(ClusterPlayersAnalysis.reliableDelivery(sent: sent, heard: [[], [], []]).lost == 10)
    }

    @Test func sessionTimeIsMovedOntoTheRawClockByTheAuthoritysOffset() {
        let offset: Int64 = 2_500_000_000
        // Paused at 1 s of raw time, played at 5 s; version 3's provisional anchor (10 s) is
        // superseded by version 4 anchored before it, so it never took effect.
        let events = [[Self.announced(1, offset + 1_000_000_000, rate: 0), Self.announced(2, offset + 5_000_000_000, rate: 1)],
                      [Self.announced(3, offset + 10_000_000_000, rate: 1), Self.announced(4, offset + 8_000_000_000, rate: 1)]]
        #expect(ClusterPlayersAnalysis.changes(events, sessionOffset: offset) == [1_000_000_000, 5_000_000_000, 8_000_000_000])
        #expect(ClusterPlayersAnalysis.playStarted(events, sessionOffset: offset) == 5_000_000_000)
        #expect(ClusterPlayersAnalysis.playStarted([[Self.announced(1, offset, rate: 0)]], sessionOffset: offset) == nil)
    }

    @Test func theWindowHoldsOnlyFramesEveryPlayerShowedThatBeganInIt() {
        func log(_ shifts: [Int64], skipping skipped: Int? = nil) -> [PresentationRecord] {
            shifts.enumerated().compactMap { frame, shift in
                guard frame != skipped else { return nil }
                let due = Int64(frame) * 40_000_000
                return PresentationRecord(item: "clip", pts: Double(frame) * 0.04, scheduledNanoseconds: due, presentedNanoseconds: due + shift)
            }
        }
        let logs = [log([0, 0, 0, 0]), log([100_000, 300_000, 0, 200_000], skipping: 3), log([0, -200_000, 500_000, 0])]
        // Frame 0 began before the window; frame 3 is missing from the second log.
        let showings = ClusterPlayersAnalysis.showings(logs, changes: [0], window: 1..<200_000_000)
        #expect(showings.map(\.key.pts) == [40_000, 80_000])
        #expect(showings.map(\.presentedSpread) == [0.5, 0.5])
    }

    @Test(arguments: [
        // Frames within 1 ms before the players were back do not count; after, two wide ones, then ten within.
        (before: 12, after: [3.0, 2.0] + Array(repeating: 0.4, count: 10), first: 14 as Int?),
        // Nine within, one wide, then ten within.
        (before: 0, after: Array(repeating: 0.2, count: 9) + [1.5] + Array(repeating: 0.2, count: 10), first: 10),
        // Never ten in a row.
        (before: 20, after: Array(repeating: 0.2, count: 9) + [1.5], first: nil),
    ])
    func inStepAgainIsTheFirstOfTenFramesWithinAMillisecondOnceBack(before: Int, after: [Double], first: Int?) {
        let spreads = Array(repeating: 0.1, count: before) + after
        let showings = spreads.enumerated().map { position, spread in
            SyncLogAnalysis.FrameShowing(key: .init(segment: 1, pts: Int64(position)), firstPresented: Int64(position) * 33_000_000,
                                         presentedSpread: spread, scheduledSpread: 0, showings: 4)
        }
        let back = Int64(before) * 33_000_000
        #expect(ClusterPlayersAnalysis.inStepAgain(showings, after: back) == first.map { Int64($0) * 33_000_000 })
    }

    @Test func socketsAreReadFromProcNetTCP() {
        let text = """
              sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
               0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0000000000000000 100 0 0 10 0
               1: 0100007F:C350 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 12345 1 0000000000000000 20 4 30 10 -1
               2: garbage
            """
        #expect(ClusterPlayersAnalysis.sockets(procNetTCP: text) == [
            .init(remotePort: 0, established: false, inode: 4242),
            .init(remotePort: 8080, established: true, inode: 12345),
        ])
    }

    @Test func thisProcessIsConnectedToTheListenerItConnectedTo() throws {
        // A real loopback connection of this process: the relay port is the listener's.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener); close(client) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                try #require(bind(listener, raw, length) == 0 && listen(listener, 1) == 0 && getsockname(listener, raw, &length) == 0)
                try #require(connect(client, raw, length) == 0)
            }
        }
        let port = UInt16(bigEndian: address.sin_port)
        #expect(ClusterPlayersAnalysis.relayPort(of: getpid(), among: [port, port &+ 1]) == port)
        #expect(ClusterPlayersAnalysis.relayPort(of: getpid(), among: [port &+ 1]) == nil)
    }
}
