import Testing
@testable import TandemNATS
import TandemNet
import TandemTestKit

/// The connection core on virtual time: a scripted server feeds it bytes, and its wake-ups are
/// scheduled on an `EmbeddedEventLoop` that the test advances. No sockets, no sleeps.
@Suite struct NATSConnectionCoreTests {
    static let second: Int64 = 1_000_000_000
    static let s1 = NATSServerAddress(host: "127.0.0.1", port: 4001)
    static let s2 = NATSServerAddress(host: "127.0.0.1", port: 4002)

    /// The core with a record of what it asked for, its wake-ups on an embedded loop.
    final class Driver: @unchecked Sendable {
        var core: NATSConnectionCore
        let loop = EmbeddedEventLoop()
        var now: Int64 { loop.currentTime }
        var wake: Int64?
        private var wakeTask: ScheduledTask?
        var written = ""
        var opened: [NATSServerAddress] = []
        var closes = 0
        var delivered: [NATSMessage] = []
        var completed: [UInt64: Result<NATSMessage, NATSError>] = [:]
        var flushed: [UInt64: Result<Void, NATSError>] = [:]
        var events: [NATSConnectionEvent] = []
        var ended: [UInt64] = []

        init(servers: [NATSServerAddress] = [s1, s2], credentials: NATSURL.Credentials = .none, configure: (inout NATSConfiguration) -> Void = { _ in }) {
            var configuration = NATSConfiguration()
            configuration.pingInterval = 10 * second
            configuration.reconnectJitter = 0
            configure(&configuration)
            core = NATSConnectionCore(url: NATSURL(servers: servers, credentials: credentials), configuration: configuration, inboxPrefix: "_INBOX.T", seed: 1)
        }

        func apply(_ directives: [NATSConnectionCore.Directive]) {
            for directive in directives {
                switch directive {
                case let .open(server): opened.append(server)
                case let .write(bytes): written += String(decoding: bytes, as: UTF8.self)
                case .closeTransport: closes += 1
                case let .deliver(message): delivered.append(message)
                case let .subscriptionEnded(sid, _): ended.append(sid)
                case let .complete(id, result): completed[id] = result
                case let .flushed(id, result): flushed[id] = result
                case let .event(event): events.append(event)
                case let .wake(at):
                    wake = at
                    wakeTask?.cancel()
                    wakeTask = at.map { deadline in
                        loop.schedule(at: deadline) { [self] in
                            wake = nil
                            apply(core.onTimer(at: loop.currentTime))
                        }
                    }
                }
            }
        }

        /// Runs every wake-up due by `time`, each at its own instant.
        func advance(to time: Int64) { loop.advance(to: time) }

        func advance(by span: Int64) { advance(to: now + span) }

        func receive(_ text: String) { apply(core.onBytes(Array(text.utf8)[...], at: now)) }

        /// What was written since the last call.
        func takeWritten() -> String {
            defer { written = "" }
            return written
        }

        /// Opens the transport and answers the handshake as a server would.
        func handshake(info: String = "{\"server_id\":\"S\",\"max_payload\":1048576,\"headers\":true}") {
            apply(core.onTransportOpened(at: now))
            receive("INFO \(info)\r\n")
            let connect = takeWritten()
            #expect(connect.hasPrefix("CONNECT {") && connect.hasSuffix("\r\nPING\r\n"), "handshake wrote \(connect)")
            receive("PONG\r\n")
        }
    }

    @Test func handshakesThenKeepsAliveAndDropsAStaleConnection() {
        let driver = Driver()
        driver.apply(driver.core.start(at: 0))
        #expect(driver.opened == [Self.s1])
        driver.handshake()
        #expect(driver.core.connectedServer == Self.s1)
        guard case .connected(Self.s1, _)? = driver.events.last else { Issue.record("no connected event: \(driver.events)"); return }

        // A PING each interval; a PONG clears the count.
        driver.advance(by: 10 * Self.second)
        #expect(driver.takeWritten() == "PING\r\n")
        driver.receive("PONG\r\n")
        // Two unanswered, then the third interval finds the connection stale.
        driver.advance(by: 20 * Self.second)
        #expect(driver.takeWritten() == "PING\r\nPING\r\n")
        #expect(driver.core.connectedServer == Self.s1)
        driver.advance(by: 10 * Self.second)
        #expect(driver.closes == 1)
        #expect(driver.core.connectedServer == nil)
        guard case let .disconnected(server, reason)? = driver.events.last else { Issue.record("no disconnected event"); return }
        #expect(server == Self.s1 && reason.contains("stale"))
        // On to the next server at once.
        #expect(driver.opened == [Self.s1, Self.s2])
    }

    @Test func answersTheServersPing() {
        let driver = Driver()
        driver.apply(driver.core.start(at: 0))
        driver.handshake()
        _ = driver.takeWritten()
        driver.receive("PING\r\n")
        #expect(driver.takeWritten() == "PONG\r\n")
    }

    @Test func requestsShareOneInboxAndTimeOutOrFindNoResponders() throws {
        let driver = Driver()
        driver.apply(driver.core.start(at: 0))
        driver.handshake()
        _ = driver.takeWritten()

        let (first, firstDirectives) = try driver.core.request("svc", payload: Array("q1".utf8), timeout: 2 * Self.second, at: driver.now)
        driver.apply(firstDirectives)
        #expect(driver.takeWritten() == "SUB _INBOX.T.* 1\r\nPUB svc _INBOX.T.\(first) 2\r\nq1\r\n")
        let (second, secondDirectives) = try driver.core.request("svc", payload: [], timeout: 5 * Self.second, at: driver.now)
        driver.apply(secondDirectives)
        // The inbox is subscribed once.
        #expect(driver.takeWritten() == "PUB svc _INBOX.T.\(second) 0\r\n\r\n")
        let (third, thirdDirectives) = try driver.core.request("nobody", payload: [], at: driver.now)
        driver.apply(thirdDirectives)

        driver.receive("HMSG _INBOX.T.\(third) 1 16 16\r\nNATS/1.0 503\r\n\r\n\r\n")
        #expect(driver.completed[third].map { if case let .failure(error) = $0 { error.kind == .noResponders } else { false } } == true)

        driver.advance(by: 2 * Self.second)
        guard case let .failure(timeout)? = driver.completed[first] else { Issue.record("the first request did not time out"); return }
        #expect(timeout.kind == .timeout)
        #expect(driver.completed[second] == nil)

        driver.receive("MSG _INBOX.T.\(second) 1 3\r\nyes\r\n")
        guard case let .success(reply)? = driver.completed[second] else { Issue.record("the second request got no reply"); return }
        #expect(reply.payload == Array("yes".utf8))
        // A reply after the timeout is dropped, not delivered anywhere.
        driver.receive("MSG _INBOX.T.\(first) 1 4\r\nlate\r\n")
        #expect(driver.delivered.isEmpty && driver.core.outstandingRequests == 0)
    }

    @Test func reconnectsToTheNextServerResubscribesAndSendsWhatWaited() throws {
        let driver = Driver()
        driver.apply(driver.core.start(at: 0))
        driver.handshake()
        let (sid, subscribing) = try driver.core.subscribe("orders.>", queue: "workers", at: driver.now)
        driver.apply(subscribing)
        let (inFlight, requesting) = try driver.core.request("svc", payload: [], at: driver.now)
        driver.apply(requesting)
        _ = driver.takeWritten()

        driver.apply(driver.core.onTransportLost("reset by peer", at: driver.now))
        // The request written on the lost connection will never hear back: it fails now.
        guard case let .failure(lost)? = driver.completed[inFlight] else { Issue.record("the in-flight request was not failed"); return }
        #expect(lost.kind == .connectionLost)
        #expect(driver.opened == [Self.s1, Self.s2])

        // Published while away: kept, in order, and a request made meanwhile waits with them.
        driver.apply(try driver.core.publish("a", payload: Array("1".utf8), at: driver.now))
        driver.apply(try driver.core.publish("a", payload: Array("2".utf8), at: driver.now))
        let (waiting, waitingDirectives) = try driver.core.request("svc", payload: [], at: driver.now)
        driver.apply(waitingDirectives)
        #expect(driver.takeWritten().isEmpty)
        #expect(driver.core.pendingByteCount > 0)

        driver.handshake()
        let renewed = driver.takeWritten()
        #expect(renewed == "SUB orders.> workers \(sid)\r\nSUB _INBOX.T.* 2\r\nPUB a 1\r\n1\r\nPUB a 1\r\n2\r\nPUB svc _INBOX.T.\(waiting) 0\r\n\r\n")
        guard case .reconnected(Self.s2, _)? = driver.events.last else { Issue.record("no reconnected event: \(driver.events)"); return }
        driver.receive("MSG orders.new \(sid) 1\r\nx\r\n")
        #expect(driver.delivered.map(\.subject) == ["orders.new"])
        driver.receive("MSG _INBOX.T.\(waiting) 2 2\r\nok\r\n")
        #expect(driver.completed[waiting].map { if case .success = $0 { true } else { false } } == true)
    }

    @Test func backsOffBetweenRoundsDoublingUpToTheCap() {
        let driver = Driver(servers: [Self.s1]) {
            $0.reconnectWait = Self.second / 10
            $0.maximumReconnectWait = Self.second / 2
        }
        driver.apply(driver.core.start(at: 0))
        driver.handshake()
        driver.apply(driver.core.onTransportLost("gone", at: driver.now))
        var attempts: [Int64] = []
        for _ in 0..<5 {
            // Each attempt fails at once (connection refused); the next waits for its turn.
            let before = driver.opened.count
            guard let wake = driver.wake else { Issue.record("no wake-up for the next attempt"); return }
            driver.advance(to: wake)
            if driver.opened.count > before {
                attempts.append(driver.now)
                driver.apply(driver.core.onTransportLost("refused", at: driver.now))
            }
        }
        let gaps = zip(attempts.dropFirst(), attempts).map { $0 - $1 }
        #expect(attempts.first == Self.second / 10)
        #expect(gaps == [Self.second / 5, Self.second * 2 / 5, Self.second / 2, Self.second / 2])
        #expect(!driver.core.isClosed)
    }

    @Test func boundsWhatWaitsWhileDisconnected() throws {
        let driver = Driver(servers: [Self.s1]) { $0.maximumPendingBytes = 64 }
        driver.apply(driver.core.start(at: 0))
        driver.handshake()
        driver.apply(driver.core.onTransportLost("gone", at: driver.now))
        driver.apply(try driver.core.publish("a", payload: [UInt8](repeating: 1, count: 40), at: driver.now))
        #expect {
            try driver.core.publish("a", payload: [UInt8](repeating: 2, count: 40), at: driver.now)
        } throws: { ($0 as? NATSError)?.kind == .pendingBufferFull }
        #expect(driver.core.pendingByteCount <= 64)
    }

    @Test func refusesMessagesBeyondTheServersMaximumPayload() {
        let driver = Driver()
        driver.apply(driver.core.start(at: 0))
        driver.handshake(info: "{\"server_id\":\"S\",\"max_payload\":16,\"headers\":true}")
        #expect { try driver.core.publish("a", payload: [UInt8](repeating: 0, count: 17), at: driver.now) } throws: { error in
            guard let error = error as? NATSError else { return false }
            return error.kind == .payloadTooLarge && error.server == Self.s1.description && error.reason.contains("16")
        }
        #expect((try? driver.core.publish("a", payload: [UInt8](repeating: 0, count: 16), at: driver.now)) != nil)
    }

    @Test func anAuthorizationFailureEndsTheFirstConnectionWithThatReason() {
        let driver = Driver(servers: [Self.s1], credentials: .userPassword(user: "u", password: "wrong"))
        driver.apply(driver.core.start(at: 0))
        driver.apply(driver.core.onTransportOpened(at: 0))
        driver.receive("INFO {\"server_id\":\"S\",\"auth_required\":true}\r\n")
        #expect(driver.takeWritten().contains("\"pass\":\"wrong\""))
        driver.receive("-ERR 'Authorization Violation'\r\n")
        #expect(driver.core.isClosed)
        guard case let .closed(error?)? = driver.events.last else { Issue.record("not closed with an error: \(driver.events)"); return }
        #expect(error.kind == .authorizationFailed && error.server == Self.s1.description)
    }

    @Test func aConnectionAttemptThatHangsTimesOutAndTheNextServerIsTried() {
        let driver = Driver { $0.connectTimeout = 2 * Self.second }
        driver.apply(driver.core.start(at: 0))
        driver.apply(driver.core.onTransportOpened(at: 0))
        // The server accepts but never sends INFO.
        driver.advance(by: 2 * Self.second)
        #expect(driver.closes == 1 && driver.opened == [Self.s1, Self.s2])
        // The second refuses: every server failed once, and the first connection gives up.
        driver.apply(driver.core.onTransportLost("refused", at: driver.now))
        guard case let .closed(error?)? = driver.events.last else { Issue.record("not closed: \(driver.events)"); return }
        #expect(error.kind == .cannotConnect && error.reason.contains("could be reached"))
    }

    @Test func learnsTheServersTheClusterAnnounces() {
        let driver = Driver(servers: [Self.s1])
        driver.apply(driver.core.start(at: 0))
        driver.handshake(info: "{\"server_id\":\"S\",\"connect_urls\":[\"127.0.0.1:4001\",\"127.0.0.1:4009\",\"[::1]:4010\"]}")
        #expect(driver.core.knownServers == [Self.s1, NATSServerAddress(host: "127.0.0.1", port: 4009), NATSServerAddress(host: "::1", port: 4010)])
        driver.apply(driver.core.onTransportLost("gone", at: driver.now))
        #expect(driver.opened.last == NATSServerAddress(host: "127.0.0.1", port: 4009))
    }

    @Test func flushesWaitForThePongAndSurviveAReconnection() throws {
        let driver = Driver()
        driver.apply(driver.core.start(at: 0))
        driver.handshake()
        _ = driver.takeWritten()
        let (now, flushing) = try driver.core.flush(timeout: 5 * Self.second, at: driver.now)
        driver.apply(flushing)
        #expect(driver.takeWritten() == "PING\r\n")
        driver.receive("PONG\r\n")
        #expect(driver.flushed[now].map { if case .success = $0 { true } else { false } } == true)

        let (later, deferred) = try driver.core.flush(timeout: 5 * Self.second, at: driver.now)
        driver.apply(deferred)
        // Its PING went out, but the connection broke before the PONG: it waits for the next one.
        #expect(driver.takeWritten() == "PING\r\n")
        driver.apply(driver.core.onTransportLost("gone", at: driver.now))
        #expect(driver.flushed[later] == nil)
        driver.handshake()
        #expect(driver.takeWritten() == "PING\r\n")
        driver.receive("PONG\r\n")
        #expect(driver.flushed[later].map { if case .success = $0 { true } else { false } } == true)

        let (never, unanswered) = try driver.core.flush(timeout: 1 * Self.second, at: driver.now)
        driver.apply(unanswered)
        driver.advance(by: Self.second)
        #expect(driver.flushed[never].map { if case let .failure(error) = $0 { error.kind == .timeout } else { false } } == true)
    }

    @Test func closingFailsWhatIsOutstandingAndEndsSubscriptions() throws {
        let driver = Driver()
        driver.apply(driver.core.start(at: 0))
        driver.handshake()
        let (sid, subscribing) = try driver.core.subscribe("a", at: driver.now)
        driver.apply(subscribing)
        let (id, requesting) = try driver.core.request("svc", payload: [], at: driver.now)
        driver.apply(requesting)
        driver.apply(driver.core.close(at: driver.now))
        #expect(driver.ended == [sid])
        #expect(driver.completed[id].map { if case let .failure(error) = $0 { error.kind == .closed } else { false } } == true)
        #expect(driver.wake == nil)
        #expect { try driver.core.publish("a", payload: [], at: driver.now) } throws: { ($0 as? NATSError)?.kind == .closed }
    }

    @Test func aMalformedServerIsDroppedAndTheNextTried() {
        let driver = Driver()
        driver.apply(driver.core.start(at: 0))
        driver.handshake()
        driver.receive("MSG a 1 nonsense\r\n")
        #expect(driver.closes == 1 && driver.opened == [Self.s1, Self.s2])
        guard case let .disconnected(_, reason)? = driver.events.last else { Issue.record("no disconnected event"); return }
        #expect(reason.contains("non-negative"))
    }
}
