import Foundation
import Testing
import Tandem
import TandemClock
import TandemMedia
import TandemPlayback
import TandemTestKit
import TandemMediaTypes

/// A coordinated built-in player suspends its participant for `.stallRecovery` on its own when it
/// stalls, and ends the suspension when it recovers: the group waits for it and resumes, with no
/// call from any program. Two real players in a session on the in-memory relay; one is slowed
/// with the decode throttle. Waits follow the coordinators' events and timelines, each bounded.
@Suite(.serialized) struct StallSuspensionIOTests {
    typealias Peers = CoordinatedTransportIOTests

    @Test func aThrottledParticipantsStallMakesTheGroupWaitAndItsRecoveryResumesIt() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let host = try await Peers.peer("host", relay: relay, invitation: nil)
        let ana = try await Peers.peer("ana", relay: relay, invitation: host.session.invitation)
        defer { [host, ana].forEach { $0.player.close() } }
        try await Peers.within(10, "both present") {
            for await participants in host.session.$activeParticipants.values where participants.count == 2 { return }
        }
        let stalls = StallRecorder()
        // The program's own handler is still called, after the player acted.
        ana.player.setStallHandler { stalls.record($0) }
        try host.player.replaceCurrentItem(with: PlaybackItem(file: Peers.clip.path))
        for peer in [host, ana] {
            try await Peers.timeline(of: peer.coordinator, "the item reaches \(peer.session.localParticipant)") { $0.item == Peers.clip.name }
        }
        host.player.play()
        for peer in [host, ana] {
            try await Peers.timeline(of: peer.coordinator, "play") { $0.rate == 1 }
            #expect(peer.recorder.wait(timeout: 10) { $0.contains { !$0.presentation.isStill } }, "a player did not start")
        }
        #expect(!ana.player.isSuspendedForStall)

        // A frame of the sample decodes in well under a millisecond; this makes one take tens of
        // milliseconds or more, beyond the 33 ms a frame lasts.
        let hostEvents = host.coordinator.events
        try ana.player.setDecodeThrottle(400)
        #expect(ana.player.decodeThrottle == 400)
        let waitedFor = try await Peers.within(15, "the group waits") { () -> [CoordinationCore.Suspension]? in
            for await event in hostEvents {
                if case .groupWaiting(let timeline, let suspensions) = event, timeline.rate == 0 { return suspensions }
            }
            return nil
        }
        #expect(waitedFor?.map(\.reason) == [.stallRecovery])
        #expect(waitedFor?.first?.participant == ana.session.localParticipant.id)
        #expect(stalls.all.first == .began)
        #expect(ana.player.isSuspendedForStall)
        try await Peers.timeline(of: ana.coordinator, "ana sees the group wait") { $0.rate == 0 }

        // Back to full speed: it decodes ahead, its suspension ends, and the group plays on.
        try ana.player.setDecodeThrottle(1)
        try await Peers.within(15, "the group resumes") {
            for await event in hostEvents {
                if case .groupResumed(let timeline, _) = event, timeline.rate == 1 { return }
            }
        }
        #expect(stalls.wait(forCount: 2, timeout: 10))
        #expect(Array(stalls.all.prefix(2)) == [.began, .ended])
        #expect(!ana.player.isSuspendedForStall)
        for peer in [host, ana] { try await Peers.timeline(of: peer.coordinator, "playing again") { $0.rate == 1 } }
        let resumedAt = ana.recorder.all.count
        #expect(ana.recorder.wait(timeout: 10) { $0.count > resumedAt && $0.contains { !$0.presentation.isStill } },
                "ana did not present again")
    }

    @Test func anUncoordinatedPlayerOnlyHearsItsStalls() throws {
        var options = HeadlessPlayer.Options()
        options.decodeAudio = false
        options.decodeThrottle = 400
        let stalls = StallRecorder()
        let player = try HeadlessPlayer(url: SampleClip.h264.path, options: options)
        defer { player.close() }
        player.setStallHandler { stalls.record($0) }
        player.play()
        #expect(stalls.wait(forCount: 1, timeout: 10))
        #expect(stalls.all.first == .began)
        // Not coordinated: no suspension, and the player is left playing.
        #expect(!player.isSuspendedForStall)
        #expect(player.timeline.rate == 1)
    }

    @Test(arguments: [0.5, 0, Double.nan, Double.infinity])
    func aThrottleBelowOneOrNotFiniteIsRefusedAtRunTime(factor: Double) throws {
        let player = try HeadlessPlayer(url: SampleClip.h264.path)
        defer { player.close() }
        let error = #expect(throws: MediaError.self) { try player.setDecodeThrottle(factor) }
        #expect(error?.description.contains("decodeThrottle") == true)
        #expect(player.decodeThrottle == 1)
    }
}
