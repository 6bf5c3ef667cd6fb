#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TandemClock
import TandemNet
import TandemWire
import Testing
import TandemHarness

/// The time service as an attacker meets it: it never answers with more bytes than it was sent,
/// and the session time it answers with does not reveal how long the host has been up.
@Suite struct TimeServiceTrustProcessTests {
    static let responder = TimeResponder(clock: SystemClock())
    static let request = TimeDatagram.request(ClockProbe(sequence: 7, sendTime: 123)).encoded()

    @Test func aRequestIsPaddedToTheReplysSize() {
        let reply = TimeDatagram.reply(TimeReply(probe: ClockProbe(sequence: 7, sendTime: 123), serverReceiveTime: 1, serverSendTime: 2))
        #expect(Self.request.count >= reply.encoded().count)
    }

    /// Every prefix of a request and every padded request: a reply only when it is no longer.
    @Test(arguments: 0...80)
    func neverAnswersWithMoreThanItWasSent(length: Int) {
        let bytes = Array((Self.request + [UInt8](repeating: 0, count: 64)).prefix(length))
        switch Self.responder.reply(to: bytes, receivedAt: 5) {
        case let .success(reply):
            #expect(reply.count <= bytes.count)
            #expect(length == TimeDatagram.size)
        case let .failure(error):
            #expect(length != TimeDatagram.size, "the well-formed request got \(error)")
            if length < TimeDatagram.size { #expect(error.isWrongLength) }
        }
    }

    @Test func randomDatagramsNeverDrawALongerReply() {
        var random = SeededRandom(seed: 12)
        for _ in 0..<5_000 {
            let length = Int.random(in: 0...48, using: &random)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            // Often a valid header, so that decoding gets past the first checks.
            if length >= 3, Bool.random(using: &random) { bytes.replaceSubrange(0..<3, with: Self.request[0..<3]) }
            if case let .success(reply) = Self.responder.reply(to: bytes, receivedAt: 0) {
                #expect(reply.count <= bytes.count)
            }
        }
    }

    @Test func anEpochClockMapsToAndFromTheRawClockExactly() {
        let clock = SessionEpochClock(offset: 987_654_321_012)
        let raw = SystemClock()
        let before = raw.instant().nanoseconds
        let session = clock.instant().nanoseconds
        let after = raw.instant().nanoseconds
        #expect(session - clock.offset >= before && session - clock.offset <= after)
        for instant: Int64 in [0, 1, 1 << 40, 3_000_000_000_123] {
            #expect(clock.monotonicTime(atLocal: clock.localTime(atMonotonic: instant)) == instant)
        }
    }

    @Test func aRandomEpochStartsTheClockInItsRangeWhateverTheUptime() {
        let raw = SystemClock()
        let clocks = (0..<20).map { _ in SessionEpochClock.random() }
        let now = raw.instant().nanoseconds
        for clock in clocks {
            // Within the range at its start, and the few ms since cannot have left it.
            #expect(SessionEpochClock.randomStart.contains(clock.localTime(atMonotonic: now) - 1_000_000_000))
        }
        #expect(Set(clocks.map(\.offset)).count > 1, "twenty random epochs were all the same")
    }

    @Test(arguments: [("random", true), ("0", true), ("-5", true), ("1152921504606846976", true),
                      ("1152921504606846977", false), ("later", false), ("", false), ("1.5", false)])
    func theCommandLineNamesAnEpoch(text: String, valid: Bool) {
        let clock = SessionEpochClock(argument: text)
        #expect((clock != nil) == valid)
        if let clock, text != "random" { #expect(clock.offset == Int64(text)) }
    }

    /// The relay's shared port stamps time replies with the clock it is given.
    @Test func aRelayAnswersOnItsEpochClock() throws {
        let offset: Int64 = 1 << 50
        let server = try RelayServer(address: try SocketAddress(host: "127.0.0.1", port: 0), clock: SessionEpochClock(offset: offset))
        server.start()
        defer { server.stop() }
        let reply = try #require(try Self.probe(server.address))
        let raw = SystemClock().instant().nanoseconds
        #expect(abs(reply.serverReceiveTime - offset - raw) < 5_000_000_000)
    }

    /// `tandem serve` as run by default: its session time is nowhere near this host's uptime;
    /// with `--session-epoch 0` it is exactly that clock, as benchmarks ask.
    @Test(arguments: [nil, "0"] as [String?])
    func serveHidesTheUptimeUnlessToldNotTo(epoch: String?) throws {
        let arguments = ["serve", "--bind", "127.0.0.1", "--port", "0"] + (epoch.map { ["--session-epoch", $0] } ?? [])
        let relay = try WatchProcess(executable: TandemProcess.executablePath, arguments: arguments, name: "relay", acceptsCommands: false)
        defer { relay.kill() }
        let line = try #require(relay.waitForLine(startingWith: "relay listening on", timeout: 20), "\(relay.standardError)")
        let address = try SocketAddress(parsing: String(try #require(line.split(separator: " ").first { $0.hasPrefix("127.0.0.1:") })))
        let reply = try #require(try Self.probe(address))
        let distance = abs(reply.serverReceiveTime - SystemClock().instant().nanoseconds)
        if epoch == nil {
            // A random start within 2^44…2^52 ns lands within a second of the uptime once in
            // millions of runs.
            #expect(distance > 1_000_000_000, "the relay's session time is the host's uptime")
        } else {
            #expect(distance < 1_000_000_000)
        }
    }

    @Test func aBadEpochIsAUsageErrorOfOneLine() throws {
        let run = try TandemProcess.run(["serve", "--bind", "127.0.0.1", "--port", "0", "--session-epoch", "soon"], timeout: 20)
        #expect(run.status != 0)
        #expect(run.standardError.contains("--session-epoch"), "\(run.standardError)")
        #expect(run.standardError.split(separator: "\n").count <= 2)
    }

    /// One probe to `address`, its reply within a bounded wait (nil if none).
    static func probe(_ address: SocketAddress) throws -> TimeReply? {
        let peer = try LoopbackPeer(service: address)
        for sequence in UInt32(1)...5 {
            try peer.send(TimeDatagram.request(ClockProbe(sequence: sequence, sendTime: 1)).encoded())
            if let bytes = try peer.receive(timeout: 1_000_000_000), case let .reply(reply) = try TimeDatagram.decode(bytes) {
                return reply
            }
        }
        return nil
    }
}
