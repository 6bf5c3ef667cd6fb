import Foundation
import Synchronization
import Testing
import Tandem
import TandemClock
import TandemNet
import TandemParty
import TandemPlayback
import TandemTestKit

/// `WatchParty` driven directly, as a program embeds it: a real relay server on loopback, the
/// built-in player on a sample clip, a host and joiners each with a party of their own. What one
/// does reaches the other as typed events; `leave` ends the leaver's `run` and the others see
/// the departure; `end` ends everyone's. Each wait is bounded.
@Suite(.serialized) struct WatchPartyIOTests {
    static let clip = SampleClip.h264BFrames

    /// Everything a party reported, in order, as its reader received it.
    final class Recorder: Sendable {
        private let recording: StreamRecording<WatchPartyEvent>
        private let arrivals: AsyncStream<WatchPartyEvent>.Continuation

        init() {
            let (stream, arrivals) = AsyncStream.makeStream(of: WatchPartyEvent.self)
            recording = StreamRecording(stream)
            self.arrivals = arrivals
        }

        /// Records `event`, after those recorded before it.
        func record(_ event: WatchPartyEvent) { arrivals.yield(event) }

        /// Every event recorded so far, in order.
        var events: [WatchPartyEvent] { recording.elements }

        /// The first event `match` picks, waited for for at most `seconds` as events arrive.
        func first<T: Sendable>(within seconds: Double = 15, _ match: @escaping @Sendable (WatchPartyEvent) -> T?) async -> T? {
            _ = await recording.awaitElements(within: seconds) { $0.contains { match($0) != nil } }
            return events.lazy.compactMap(match).first
        }
    }

    /// A participant: its center (kept for as long as it watches), its party, what the party
    /// reported, and its `run`.
    struct Participant {
        let center: ActivityCenter
        let party: WatchParty
        let recorder: Recorder
        let run: Task<WatchParty.Ending, any Error>
    }

    /// Starts (without `invitation`) or joins a watch of the clip as `name`, and runs its party,
    /// configured as `configure` says (given the recorder of its events).
    /// `connector`, when given, is how this participant reaches the relay instead of the relay's own.
    static func participant(_ name: String, relay: TestRelay, invitation: Invitation?, connector: (any RelayConnector)? = nil,
                            configure: (inout WatchParty.Configuration, Recorder) -> Void = { _, _ in }) async throws -> Participant {
        let center = ActivityCenter()
        center.displayName = name
        center.configure(relay: connector ?? relay.connector, host: relay.host, port: relay.port, sessionClock: .derived(from: SystemClock()))
        var sessions = center.sessions(for: WatchTogether.self).makeAsyncIterator()
        if let invitation {
            try await center.accept(invitation)
        } else {
            try await center.start(WatchTogether(item: clip.name))
        }
        let session = try #require(await sessions.next())
        session.join()
        #expect(await awaitValue(session.$state.values) { if case .joined = $0 { true } else { false } })
        var configuration = WatchParty.Configuration(media: [clip.path], isHost: invitation == nil)
        configuration.refusesStreaming = true
        let recorder = Recorder()
        configure(&configuration, recorder)
        let party = WatchParty(session: session, configuration: configuration)
        let events = party.events
        let reading = Task { for await event in events { recorder.record(event) } }
        let run = Task {
            defer { reading.cancel() }
            return try await party.run()
        }
        #expect(await recorder.first { if case .joined = $0 { true } else { nil } } == true, "\(name) never watched")
        return Participant(center: center, party: party, recorder: recorder, run: run)
    }

    /// `body` until it returns without throwing (a party's methods throw until its watch has
    /// begun), for at most 10 s.
    static func once(_ body: () throws -> Void) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            do { return try body() } catch where ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// The first non-nil value of `body`, tried every 50 ms for at most `seconds`.
    static func eventually<T>(within seconds: Double, _ body: () -> T?) async -> T? {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if let value = body() { return value }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return body()
    }

    /// The ending of `participant`'s `run`, within `seconds`, or nil.
    static func ending(of participant: Participant, within seconds: Double = 15) async throws -> WatchParty.Ending? {
        try await withThrowingTaskGroup(of: WatchParty.Ending?.self) { group in
            group.addTask { try await participant.run.value }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// The change `participant` saw by `name` whose description `matches`, with its timeline.
    static func change(seenBy participant: Participant, by name: String, _ matches: @escaping @Sendable (String) -> Bool)
        async -> WatchPartyEvent.Timeline? {
        await participant.recorder.first { event in
            if case .timeline(let timeline, let change) = event, change.by == name, matches(change.change) { timeline } else { nil }
        }
    }

    @Test func aJoinersChangesAndChatReachTheHostAndLeavingAndEndingEndTheRuns() async throws {
        let relay = try TestRelay(.network)
        defer { relay.shutdown() }
        let host = try await Self.participant("host", relay: relay, invitation: nil)
        let invitation = host.party.session.invitation
        let ana = try await Self.participant("ana", relay: relay, invitation: invitation)
        #expect(await host.recorder.first { if case .participantJoined(let who) = $0, who.name == "ana" { true } else { nil } } == true)

        // Ana plays, seeks and pauses: the host hears each, typed, as Ana's.
        try await Self.once { try ana.party.play() }
        let played = await Self.change(seenBy: host, by: "ana") { $0 == "play" }
        #expect(played?.rate == 1 && played?.item == Self.clip.name, "\(String(describing: played))")
        try ana.party.seek(toSeconds: 1.5)
        let seeked = await Self.change(seenBy: host, by: "ana") { $0.hasPrefix("seek") }
        #expect(seeked?.mediaTime == 1.5, "\(String(describing: seeked))")
        try ana.party.pause()
        let paused = await Self.change(seenBy: host, by: "ana") { $0 == "pause" }
        #expect(paused?.rate == 0, "\(String(describing: paused))")

        // The host says something: Ana reads it, from the host.
        try host.party.say("hello, ana")
        let said = await ana.recorder.first { if case .chat(let chat) = $0 { chat } else { nil } }
        #expect(said?.from == "host" && said?.text == "hello, ana", "\(String(describing: said))")

        // Ana leaves: her run returns (she left herself: no error, not ended here), and the
        // host sees her go.
        ana.party.leave()
        let left = try #require(try await Self.ending(of: ana), "ana's run did not return")
        #expect(!left.endedHere)
        #expect(await host.recorder.first { if case .participantLeft(let who) = $0, who.name.hasPrefix("ana") { true } else { nil } } == true)

        // Ben joins; the host ends the session: both runs return, the host's as ended here.
        let ben = try await Self.participant("ben", relay: relay, invitation: invitation)
        #expect(await host.recorder.first { if case .participantJoined(let who) = $0, who.name == "ben" { true } else { nil } } == true)
        host.party.end()
        let ended = try #require(try await Self.ending(of: host), "the host's run did not return")
        #expect(ended.endedHere)
        let benEnded = try #require(try await Self.ending(of: ben), "ben's run did not return")
        #expect(!benEnded.endedHere && benEnded.reason != nil)
        #expect(await ben.recorder.first { if case .left = $0 { true } else { nil } } == true)
    }
}

/// Everyone's health for everyone: each party sends its own report on the unreliable path, and
/// the others show it (the table, `health` events) while the group plays.
@Suite(.serialized) struct WatchPartyHealthIOTests {
    @Test func eachParticipantHearsTheOthersReportsAndShowsThemInItsTable() async throws {
        let relay = try TestRelay(.network)
        defer { relay.shutdown() }
        let host = try await WatchPartyIOTests.participant("host", relay: relay, invitation: nil)
        let ana = try await WatchPartyIOTests.participant("ana", relay: relay, invitation: host.party.session.invitation) { configuration, _ in
            configuration.latencyOffset = 50
        }
        try await WatchPartyIOTests.once { try host.party.play() }

        // The host hears Ana's own word, typed and as JSON: her player, her offset, playing.
        let heard = await host.recorder.first(within: 20) { event in
            if case .health(let health) = event, health.from == "ana", health.state == "playing", health.clockError != nil {
                health
            } else {
                nil
            }
        }
        let report = try #require(heard, "no playing report from ana")
        #expect(report.player == "built-in" && report.offset == 50)
        #expect(report.participant == ana.party.session.localParticipant.id.uuidString)
        // Her pictures are measured once she plays; her offset is not counted as lateness.
        let measured = await host.recorder.first(within: 20) { event in
            if case .health(let health) = event, health.from == "ana", let lateness = health.lateness { lateness } else { nil }
        }
        let lateness = try #require(measured, "ana's lateness never measured")
        #expect(abs(lateness) < 50_000, "ana's pictures \(lateness) µs late: her 50 ms offset was counted")

        // The host's table has Ana's line from her report; her own has the host's.
        let line = try #require(host.party.health()?.lines.first { $0.hasPrefix("ana") })
        #expect(line.contains("built-in") && line.contains("offset 50 ms"), "\(line)")
        let hostLine = await WatchPartyIOTests.eventually(within: 10) {
            ana.party.health()?.lines.first { $0.hasPrefix("host") && $0.contains("built-in") }
        }
        #expect(hostLine != nil, "\(String(describing: ana.party.health()?.lines))")

        host.party.end()
        _ = try await WatchPartyIOTests.ending(of: host)
        _ = try await WatchPartyIOTests.ending(of: ana)
    }
}

/// What a front relies on: its own refusals in order with the party's events, and the player's
/// close told before the departure is awaited.
@Suite(.serialized) struct WatchPartyFrontIOTests {
    @Test func aFrontsRefusalFollowsTheEventsBeforeItAndThePlayerClosesBeforeTheRunReturns() async throws {
        let relay = try TestRelay(.network)
        defer { relay.shutdown() }
        // How often the player's close was told, and whether the watch was over by then.
        let closed = Mutex<(count: Int, over: Bool)>((0, false))
        let party = Mutex<WatchParty?>(nil)
        let host = try await WatchPartyIOTests.participant("host", relay: relay, invitation: nil) { configuration, _ in
            configuration.playerClosed = {
                let over = party.withLock { $0 }.map { if case .invalidated = $0.session.state { true } else { false } } ?? false
                closed.withLock { $0 = ($0.count + 1, over) }
            }
        }
        party.withLock { $0 = host.party }
        let recorder = host.recorder

        // A refusal of the front's own comes after `joined`, reported before it.
        #expect(host.party.reportRefusal("no such command"))
        let refused = await recorder.first { event -> Bool? in
            if case .error(let message) = event, message.message == "no such command" { true } else { nil }
        }
        #expect(refused == true)
        let order = recorder.events.map(\.name)
        #expect((order.firstIndex(of: "joined") ?? .max) < (order.firstIndex(of: "error") ?? -1), "\(order)")

        // Leaving: the player closes (told once, the session over) before `run` returns.
        host.party.leave()
        let ending = try #require(try await WatchPartyIOTests.ending(of: host), "the run did not return")
        #expect(!ending.endedHere)
        let told = closed.withLock { $0 }
        #expect(told.count == 1 && told.over, "\(told)")
        // Over: the front says a refusal itself.
        #expect(!host.party.reportRefusal("too late"))
    }
}
