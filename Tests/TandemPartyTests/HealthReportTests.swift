import Foundation
import Testing
import TandemClock
@testable import TandemParty

/// Everyone's health for everyone (`HealthReport`): how often reports go as parties grow, which
/// reports say a participant is off the group, which are dropped as implausible, how the table
/// and the `health` event show them.
@Suite struct HealthReportTests {
    static func report(_ lateness: Int?, _ state: HealthReport.State = .playing, player: HealthReport.Player = .builtIn,
                       offset: Int = 0) -> HealthReport {
        HealthReport(pictureLateness: lateness, clockErrorBound: 400, state: state, player: player, latencyOffset: offset)
    }

    @Test func reportsGoOnceASecondUntilTheyWouldTakeATwentiethOfTheFanOutBudget() {
        #expect(HealthReport.interval(participants: 1) == .seconds(1))
        #expect(HealthReport.interval(participants: 3) == .seconds(1))
        #expect(HealthReport.interval(participants: 100) == .seconds(1))
        // 1,000 participants each to 999 others: 999,000 deliveries a round, a twentieth of
        // 200,000 a second is 10,000 a second, so a round every 99.9 s.
        let large = HealthReport.interval(participants: 1_000)
        #expect(abs(large.seconds - 99.9) < 0.01)
        for participants in [2, 50, 101, 320, 1_000, 5_000] {
            let count = Double(participants)
            let deliveries = count * (count - 1) / HealthReport.interval(participants: participants).seconds
            #expect(deliveries <= HealthReport.fanoutBudget / 20 + 1, "\(participants) participants")
        }
        #expect(HealthReport.lifetime(participants: 3) == .seconds(3))
    }

    @Test func offIsFurtherThanTheThresholdEitherWayOrStalledWhilePlaying() {
        #expect(!Self.report(19_999).isOff)
        #expect(Self.report(20_001).isOff)
        #expect(Self.report(-25_000).isOff)
        #expect(!Self.report(nil).isOff)
        #expect(Self.report(nil, .stalled).isOff)
        #expect(!Self.report(90_000, .paused).isOff)
        #expect(!Self.report(90_000, .waiting).isOff)
    }

    @Test func soundFurtherThanTheThresholdIsOffAndShownBesideThePictures() {
        var report = Self.report(300)
        report.soundLateness = 19_000
        #expect(!report.isOff)
        #expect(report.words.prefix(2) == ["0.3 ms late", "sound 19.0 ms late"])
        report.soundLateness = -21_000
        #expect(report.isOff)
        #expect(report.words.contains("sound 21.0 ms early"))
        report.soundLateness = 10
        #expect(report.words.contains("sound on time"))
        // Paused, nothing is measured against a moving timeline.
        report.state = .paused
        report.soundLateness = 90_000
        #expect(!report.isOff && !report.words.contains { $0.hasPrefix("sound") })
        report.soundLateness = 4_000_000_000
        #expect(!report.isPlausible)
        // The event carries it by its own name; a report without it decodes as before.
        report.soundLateness = 1_234
        let fields = WatchPartyEvent.Health(from: "Ana", participant: "id", report: report)
        let json = String(decoding: try! JSONEncoder().encode(fields), as: UTF8.self)
        #expect(json.contains(#""sound_lateness_us":1234"#), "\(json)")
        let old = #"{"state":"playing","player":"built-in","latencyOffset":0,"pictureLateness":5}"#
        #expect(try! JSONDecoder().decode(HealthReport.self, from: Data(old.utf8)).soundLateness == nil)
    }

    @Test func implausibleReportsAreDropped() {
        #expect(Self.report(1_500).isPlausible)
        #expect(!Self.report(4_000_000_000).isPlausible)
        #expect(!HealthReport(pictureLateness: 0, clockErrorBound: -1, state: .playing, player: .mpv, latencyOffset: 0).isPlausible)
        #expect(!Self.report(0, offset: 5_000).isPlausible)
        // An unknown state or player does not decode at all.
        let json = #"{"state":"dancing","player":"built-in","latencyOffset":0}"#
        #expect(throws: (any Error).self) { try JSONDecoder().decode(HealthReport.self, from: Data(json.utf8)) }
    }

    @Test func theTableShowsWhatEachOtherSaysAndTheStatusLineNamesWhoIsOff() {
        let health = GroupHealth(members: [
            .init(name: "Ana", isLocal: true),
            .init(name: "Ben", report: Self.report(35_400)),
            .init(name: "Cy", report: Self.report(-300, player: .mpv, offset: 50)),
            .init(name: "Dee", report: Self.report(nil, .stalled)),
            .init(name: "Eve", isPrerolling: true, report: Self.report(nil, .waiting)),
        ], isPlaying: true, syncError: .microseconds(100), clockErrorBound: .microseconds(200))
        #expect(health.lines == [
            "you (Ana): 0.1 ms ahead of the group, clock ±0.20 ms",
            "Ben: 35.4 ms late, clock ±0.40 ms, built-in",
            "Cy: 0.3 ms early, clock ±0.40 ms, mpv, offset 50 ms",
            "Dee: stalled: its player is catching up, clock ±0.40 ms, built-in",
            "Eve: getting ready to play, clock ±0.40 ms, built-in",
        ])
        #expect(health.offMembers == ["Ben", "Dee"])
    }

    @Test func aReportCarriesAChainHeadUnderAnOrder() throws {
        let head = String(repeating: "ab", count: 32)
        let report = HealthReport(pictureLateness: 0, clockErrorBound: 100, state: .playing, player: .builtIn, latencyOffset: 0,
                                  order: 57, head: head)
        #expect(report.isPlausible)
        let decoded = try JSONDecoder().decode(HealthReport.self, from: JSONEncoder().encode(report))
        #expect(decoded == report)
        // A head that is not one (too short, not hexadecimal), or without its order, is dropped.
        var bad = report
        bad.head = String(repeating: "ab", count: 16)
        #expect(!bad.isPlausible)
        bad.head = String(repeating: "zz", count: 32)
        #expect(!bad.isPlausible)
        bad = report
        bad.order = nil
        #expect(!bad.isPlausible)
        let event = WatchPartyEvent.relayDivergence(.init(with: "Ben", participant: "B3F1", order: 57))
        #expect(EventSentence.sentence(for: event) == "the relay showed you and Ben different changes (order 57): it cannot be trusted with this party")
    }

    /// The round trip to the relay, where the sender measured one: in its line, in its event,
    /// and a report with an impossible one dropped.
    @Test func theRoundTripIsShownWhereItWasMeasured() throws {
        var report = Self.report(1_500)
        report.roundTrip = 320
        #expect(report.isPlausible)
        let health = GroupHealth(members: [.init(name: "Ana", isLocal: true), .init(name: "Ben", report: report)],
                                 isPlaying: true, syncError: nil, clockErrorBound: nil)
        #expect(health.lines.last == "Ben: 1.5 ms late, clock ±0.40 ms, round trip 0.3 ms, built-in")
        let event = WatchPartyEvent.health(.init(from: "Ben", participant: "B3F1", report: report))
        let line = String(decoding: try JSONEncoder().encode(event), as: UTF8.self)
        #expect(line.contains(#""round_trip_us":320"#), "\(line)")
        #expect(try JSONDecoder().decode(WatchPartyEvent.self, from: Data(line.utf8)) == event)
        report.roundTrip = -1
        #expect(!report.isPlausible)
    }

    @Test func theHealthEventCarriesTheReportAndReadsBack() throws {
        let event = WatchPartyEvent.health(.init(from: "Ben", participant: "B3F1", report: Self.report(35_400, offset: 50)))
        let line = String(decoding: try JSONEncoder().encode(event), as: UTF8.self)
        for field in [#""event":"health""#, #""lateness_us":35400"#, #""clock_error_us":400"#, #""state":"playing""#,
                      #""player":"built-in""#, #""offset_ms":50"#, #""off":true"#] {
            #expect(line.contains(field), "\(line)")
        }
        #expect(try JSONDecoder().decode(WatchPartyEvent.self, from: Data(line.utf8)) == event)
        #expect(EventSentence.sentence(for: event) == nil)
    }
}
