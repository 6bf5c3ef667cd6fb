import Foundation
import Testing
import Tandem
import TandemClock
import TandemMedia
import TandemNet
import TandemPlayback
import TandemTestKit
import TandemMpv

/// A session on the in-memory relay with the built-in player as host and a real headless mpv as
/// guest, which the mpv tests share.
enum MpvGroup {
    struct Member {
        let session: GroupSession<WatchTogether>
        let coordinator: PlaybackCoordinator
        var id: UUID { session.localParticipant.id }
    }

    /// Joins `name` to the session of `invitation` (or starts one on `item`) with `coordinator`.
    static func member(_ name: String, relay: TestRelay, item: String, invitation: Invitation?,
                       coordinator: PlaybackCoordinator) async throws -> Member {
        let center = ActivityCenter()
        center.displayName = name
        center.configure(relay: relay.connector, host: relay.host, port: relay.port, sessionClock: .derived(from: SystemClock()))
        var sessions = center.sessions(for: WatchTogether.self).makeAsyncIterator()
        if let invitation {
            try await center.accept(invitation)
        } else {
            try await center.start(WatchTogether(item: item))
        }
        let session = try #require(await sessions.next())
        session.join()
        #expect(await awaitValue(session.$state.values) { if case .joined = $0 { true } else { false } })
        coordinator.coordinateWithSession(session)
        return Member(session: session, coordinator: coordinator)
    }

    /// The built-in player on the long clip, without sound.
    static func builtin(_ clip: String) throws -> HeadlessPlayer {
        var options = HeadlessPlayer.Options()
        options.decodeAudio = false
        return try HeadlessPlayer(url: clip, options: options)
    }

    /// A built-in host and an mpv guest (launched with `options`) on one item, over a relay
    /// with `configuration`; `body` runs with both and another connection to mpv's socket (how
    /// the tests watch mpv, and play the person at its keys); mpv always stops.
    static func with(relay configuration: RelayCoreConfiguration = RelayCoreConfiguration(),
                     options: MpvPlayer.Options = MpvFixture.headless(ipcPath: MpvFixture.socketPath()),
                     _ body: (Member, Member, MpvPlayer, HeadlessPlayer, MpvConnection) async throws -> Void) async throws {
        let clip = try MpvFixture.longClip()
        let item = URL(fileURLWithPath: clip).lastPathComponent
        let relay = try TestRelay(.inMemory, configuration: configuration)
        defer { relay.shutdown() }
        let builtin = try builtin(clip)
        defer { builtin.close() }
        let mpv = try await MpvPlayer.launch(file: clip, options: options)
        do {
            let host = try await member("host", relay: relay, item: item, invitation: nil, coordinator: builtin.playbackCoordinator)
            let guest = try await member("mpv", relay: relay, item: item, invitation: host.session.invitation,
                                         coordinator: mpv.playbackCoordinator)
            try host.coordinator.transitionToItem(identifier: item)
            #expect(await awaitTimeline(of: guest.coordinator) { $0.item == item })
            let other = try MpvConnection(path: mpv.ipcPath)
            defer { other.close() }
            try await body(host, guest, mpv, builtin, other)
        } catch {
            await mpv.close()
            throw error
        }
        await mpv.close()
        #expect(!mpv.process.isRunning)
    }
}
