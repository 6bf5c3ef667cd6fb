import Foundation
import Testing
@testable import TandemParty

/// `--events json` is a contract: a recorded line of every kind, as `tandem` printed it before
/// the events were typed, decodes as its typed case and is written back as the same object.
@Suite struct WatchPartyEventTests {
    static let session = "9B1DEB4D-3B7D-4BAD-9BDD-2B0D7B3DCB6D"
    static let peer = "1F7E2C2A-5D59-4C55-9E0B-6A4F3F2C9D10"

    /// One line of each kind (both forms of `rejected` and `statistics`, the optional fields of
    /// `joined`, `timeline` and `sync` present and absent), keys sorted as the printer sorts them.
    static let recorded: [String] = [
        #"{"event":"joined","item":"clip.mp4","participant":"alice","session":"\#(session)"}"#,
        #"{"event":"joined","item":"clip.mp4","monotonic_ns":81234567890,"participant":"ben","session":"\#(session)","streamed":true}"#,
        #"{"event":"joined","item":"clip.mp4","mpv_ipc":"\/tmp\/tandem-mpv-1.sock","participant":"cleo","player":"mpv","session":"\#(session)"}"#,
        #"{"event":"left","reason":"left the session"}"#,
        #"{"event":"participant-joined","name":"ben"}"#,
        #"{"event":"participant-left","name":"ben (3f2a)"}"#,
        #"{"event":"away","name":"ben","participant":"\#(peer)"}"#,
        #"{"event":"back","name":"ben","participant":"\#(peer)"}"#,
        #"{"by":"alice","change":"play","effective_session_ns":12500000000,"event":"timeline","item":"clip.mp4","media_time":0,"rate":1,"version":2}"#,
        #"{"by":"ben","change":"seek 10.000","effective_session_ns":15250000000,"event":"timeline","item":"clip.mp4","media_time":10,"rate":1.5,"version":3}"#,
        #"{"by":"alice","change":"pre-rolled for v4","completes":4,"effective_session_ns":16000000000,"event":"timeline","item":"clip.mp4","media_time":2.25,"rate":1,"version":5}"#,
        #"{"effective_session_ns":17000000000,"event":"waiting","for":["ben: stallRecovery","cleo: buffering"],"item":"clip.mp4","media_time":3.5,"rate":0,"version":6}"#,
        #"{"by":"ben","effective_session_ns":18000000000,"event":"resumed","item":"clip.mp4","media_time":3.5,"rate":1,"version":7}"#,
        #"{"change":"end of item: next","effective_session_ns":20000000000,"event":"item-ended","identifier":"b.mp4","index":1,"item":"a.mp4","media_time":5,"rate":1,"version":8}"#,
        #"{"event":"item-mismatch","item":"clip.mp4","message":"participants play different files under the name clip.mp4","participants":["alice","ben"]}"#,
        #"{"by":"mallory","event":"rejected","message":"skipped a change: rate 1e+15 is out of range","order":12,"reason":"invalid rate"}"#,
        #"{"count":3,"event":"rejected","path":"session.message","reason":"badSignature","sender":"\#(peer)"}"#,
        #"{"event":"command-abandoned","message":"the player did not complete a command by its due date","version":9}"#,
        #"{"event":"history","message":"restored from the snapshot at order 40, reflecting 38"}"#,
        #"{"event":"chat","from":"ben","participant":"\#(peer)","text":"hi é \"there\""}"#,
        #"{"event":"latency-offset","ms":-40}"#,
        #"{"event":"stall","seconds":1.5,"waits":true}"#,
        #"{"event":"stall-ended","seconds":2,"waits":false}"#,
        #"{"event":"stalled"}"#,
        #"{"event":"stall-recovered"}"#,
        #"{"event":"throttle","factor":8,"seconds":2.5}"#,
        #"{"event":"throttle-ended","factor":1}"#,
        #"{"event":"unmatched-media","file":"\/media\/other.mp4","message":"\/media\/other.mp4 matches no item of the group's queue (by content)"}"#,
        #"{"count":2,"event":"item","identifier":"b.mp4","index":1}"#,
        #"{"dropped":1,"event":"statistics","presented":250,"stills":3}"#,
        #"{"corrective_seeks":0,"event":"statistics","follow":"scheduled","last_error_ms":0.412,"last_start_error_ms":1.25,"measurements":40,"mpv_proposals":1,"nudges":2,"player":"mpv","readings":0,"starts":3}"#,
        #"{"corrective_seeks":0,"event":"statistics","follow":"on-receipt","measurements":0,"mpv_proposals":0,"nudges":0,"player":"mpv","readings":0,"starts":0}"#,
        #"{"clock_error_bound_ns":250000,"clock_offset_ns":-1200,"dropped":0,"event":"sync","presented":120,"sync_error_ns":-35000,"version":3}"#,
        #"{"clock_error_bound_ns":250000,"clock_offset_ns":0,"dropped":0,"event":"sync","presented":0,"version":0}"#,
        #"{"event":"error","message":"unknown command 'jump'"}"#,
        #"{"event":"streaming","holders":["alice","cleo"],"identity":"sha256:1f2e","item":"clip.mp4"}"#,
        #"{"event":"stream-suspended","identity":"sha256:1f2e","message":"no holder of the item is left: playback is not possible here"}"#,
        #"{"event":"stream-resumed","identity":"sha256:1f2e"}"#,
        #"{"event":"stream-rejected-holder","holder":"mallory","identity":"sha256:1f2e","message":"its copy is not the item (its ends do not match the identity)"}"#,
        #"{"event":"mpv-exited","status":0}"#,
        #"{"event":"relay","reason":"the relay lost NATS","state":"unavailable"}"#,
        #"{"event":"relay","state":"available"}"#,
        #"{"event":"relay-divergence","order":57,"participant":"\#(session)","with":"ben"}"#,
        #"{"ahead_ms":2500,"count":1,"event":"relay-time-jump","order":57}"#,
        #"{"by":"alice","change":"op ben","control":"operators","event":"roles","operators":["alice","ben"]}"#,
        #"{"by":"ben","change":"control everyone","control":"operators","event":"roles","operators":["alice"],"refused":"only operators may change who controls the session"}"#,
        #"{"clock_error_us":410,"event":"health","from":"ben","lateness_us":-1250,"off":false,"offset_ms":0,"participant":"\#(session)","player":"mpv","state":"playing"}"#,
    ]

    /// Every kind `WatchPartyEvent` types, by name.
    static let kinds: Set<String> = [
        "joined", "left", "participant-joined", "participant-left", "away", "back", "timeline", "waiting", "resumed", "item-ended",
        "item-mismatch", "rejected", "command-abandoned", "history", "chat", "latency-offset", "stall", "stall-ended", "stalled",
        "stall-recovered", "throttle", "throttle-ended", "unmatched-media", "item", "statistics", "sync", "error", "streaming",
        "stream-suspended", "stream-resumed", "stream-rejected-holder", "mpv-exited", "relay", "health", "relay-divergence",
        "relay-time-jump", "roles",
    ]

    static func object(_ line: String) throws -> NSDictionary {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? NSDictionary)
    }

    @Test func everyKindIsRecorded() throws {
        let names = try Set(Self.recorded.map { try #require(Self.object($0)["event"] as? String) })
        #expect(names == Self.kinds)
    }

    @Test(arguments: recorded)
    func aRecordedLineDecodesTypedAndIsWrittenBackAsTheSameObject(_ line: String) throws {
        let event = try #require(WatchPartyEvent(line: line))
        if case .other = event { Issue.record("\(line) decoded as an unknown kind") }
        #expect(event.name == (try Self.object(line)["event"] as? String))
        let written = try #require(event.jsonLine)
        #expect(try Self.object(written) == Self.object(line), "\(written)")
        // The same serializer as before, keys sorted: the very bytes.
        #expect(written == line)
        // And back again, the same event.
        #expect(WatchPartyEvent(line: written) == event)
    }

    @Test func theTwoFormsOfRejectedAndOfStatisticsAreToldApart() throws {
        let kinds = Self.recorded.compactMap { WatchPartyEvent(line: $0) }.compactMap { event -> String? in
            switch event {
            case .proposalRejected: "proposal"
            case .bodyRejected: "body"
            case .statistics: "builtin"
            case .mpvStatistics: "mpv"
            default: nil
            }
        }
        #expect(kinds == ["proposal", "body", "builtin", "mpv", "mpv"])
    }

    @Test func fieldsAreTyped() throws {
        let event = try #require(WatchPartyEvent(line: Self.recorded[10]))
        guard case .timeline(let timeline, let change) = event else {
            Issue.record("not a timeline: \(event)")
            return
        }
        #expect(timeline == .init(version: 5, rate: 1, mediaTime: 2.25, effectiveSessionNanoseconds: 16_000_000_000, item: "clip.mp4"))
        #expect(change == .init(by: "alice", change: "pre-rolled for v4", completes: 4))
        #expect(event.timeline == timeline)
    }

    @Test func aKindNotKnownOrFieldsThatDoNotFitItAreKeptAsTheyWere() throws {
        let unknown = #"{"event":"relay-notice","lost":true,"relays":["a","b"],"seconds":2.5}"#
        let event = try #require(WatchPartyEvent(line: unknown))
        #expect(event == .other(name: "relay-notice", fields: ["lost": .bool(true), "relays": .array([.string("a"), .string("b")]),
                                                                "seconds": .double(2.5)]))
        #expect(event.jsonLine == unknown)
        // A timeline without its media time is no typed timeline.
        let partial = #"{"event":"timeline","version":5}"#
        #expect(WatchPartyEvent(line: partial) == .other(name: "timeline", fields: ["version": .int(5)]))
        // Not an event at all.
        #expect(WatchPartyEvent(line: "tandem://127.0.0.1:7462/x?k=y") == nil)
        #expect(WatchPartyEvent(line: #"{"no":"event"}"#) == nil)
        #expect(WatchPartyEvent(line: "{") == nil)
    }

    /// The readable form shows each value as Swift shows the native one: a fraction keeps its
    /// `.0`, an array of names is quoted.
    @Test func theReadableDetailsAreAsBefore() throws {
        let waiting = try #require(WatchPartyEvent(line: Self.recorded[11]))
        #expect(waiting.details == #"effective_session_ns=17000000000 for=["ben: stallRecovery", "cleo: buffering"] item=clip.mp4 media_time=3.5 rate=0.0 version=6"#)
        let stall = try #require(WatchPartyEvent(line: Self.recorded[22]))
        #expect(stall.details == "seconds=2.0 waits=false")
        #expect(WatchPartyEvent.stalled.details == "")
    }

    @Test func controlsThatATerminalWouldActOnAreEscaped() throws {
        let event = WatchPartyEvent.chat(.init(from: "m\u{9B}31m", participant: Self.peer, text: "a\u{202E}b\u{7F}"))
        let line = try #require(event.jsonLine)
        #expect(!line.unicodeScalars.contains { (0x7F...0x9F).contains($0.value) || $0.value == 0x202E })
        #expect(line.contains(#"\u009b"#) && line.contains(#"\u202e"#) && line.contains(#"\u007f"#))
        #expect(WatchPartyEvent(line: line) == event)
        // JSON has no NaN: such an event has no line (and nothing is printed).
        #expect(WatchPartyEvent.throttle(.init(factor: .nan, seconds: 1)).jsonLine == nil)
    }
}
