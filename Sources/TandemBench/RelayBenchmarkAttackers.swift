#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import TandemClock
import TandemNet
import TandemWire

/// The attacks of `tandem bench relay --adversarial`, at stated rates: the attacks on
/// the relay, each a bounded dose so that today's relay (which has no defence against some of
/// them) shows the damage without taking the machine down with it.
public struct RelayAttackPlan: Sendable, Hashable, Codable {
    /// Connections that each create a session of their own, propose large bodies, acknowledge
    /// sequence numbers they were never sent (through 2^64-1) and never read.
    public var neverReading = 10
    /// Proposals per second each never-reading connection sends.
    public var neverReadingRate = 256
    /// The size of each of their proposals' bodies.
    public var neverReadingBody = 64 * 1024
    /// How many bytes each never-reading connection sends at most, over all its reconnections:
    /// 640 MiB in all, more than the relay's budget (512 MiB), so that a relay that keeps them
    /// all shows it.
    public var neverReadingBytes = 64 * 1024 * 1024
    /// Unauthenticated connections that each send all but the last byte of a frame of the
    /// largest length, then wait, and reconnect when the relay cuts them.
    public var partialFrames = 20
    /// Members of one attacking session, who read and acknowledge what they get.
    public var fanOutMembers = 10
    /// Of those, how many flood small reliable messages to everyone.
    public var fanOutSenders = 2
    /// Messages per second each fan-out sender offers: the relay's per-connection flood limit
    /// (`RelayCoreConfiguration.floodRate`), which the relay enforces.
    public var fanOutRate = 20_000
    /// The size of each fan-out message's body.
    public var fanOutBody = 1024
    /// UDP sockets flooding datagram registrations with tokens the relay never issued.
    public var datagramSockets = 10
    /// Registrations per second each datagram socket sends.
    public var datagramRate = 2_000
    /// Sockets held open without a word, from four sources of their own (127.0.0.3 to
    /// 127.0.0.6), each reopened as soon as the relay closes it: what would take every place of
    /// the connections not yet admitted if those were one pool.
    public var idleSockets = 400
    /// Connections that each create a session of their own and upload attachments into it
    /// until the relay refuses, then stay: what would fill the memory budget if it were one pool.
    public var memoryHogs = 1
    /// How many bytes each memory hog uploads at most: more than the relay's budget (512 MiB).
    public var memoryHogBytes = 640 * 1024 * 1024

    /// The defaults above: 451 connections in all.
    public init() {}

    /// TCP connections and UDP sockets together.
    public var connections: Int { neverReading + partialFrames + fanOutMembers + datagramSockets + idleSockets + memoryHogs }

    /// One kind of attack of a plan.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// Never-reading connections.
        case neverReading = "never-reading"
        /// Partial frames before authenticating.
        case partialFrames = "partial-frames"
        /// A fan-out flood.
        case fanOut = "fan-out"
        /// A datagram registration flood.
        case datagrams = "registrations"
        /// Idle sockets that never say hello.
        case idleSockets = "idle-sockets"
        /// Uploads that fill the memory budget from one session.
        case memoryHog = "memory-hog"
    }

    /// This plan with every attack but `kind` left out.
    public func only(_ kind: Kind) -> RelayAttackPlan {
        var plan = self
        if kind != .neverReading { plan.neverReading = 0 }
        if kind != .partialFrames { plan.partialFrames = 0 }
        if kind != .fanOut { plan.fanOutMembers = 0 }
        if kind != .datagrams { plan.datagramSockets = 0 }
        if kind != .idleSockets { plan.idleSockets = 0 }
        if kind != .memoryHog { plan.memoryHogs = 0 }
        return plan
    }
}

/// The attackers as a process of their own (`tandem bench relay --attack PORT`), which the
/// adversarial benchmark starts beside the relay's: it attacks until a line `stop` or the end
/// of its standard input, or its time limit, then prints what it did as one line of JSON.
public enum RelayAttackerProcess {
    /// The line printed once the attacks are under way.
    public static let readyLine = "attack ready"
    /// The start of the last line, followed by the counts in JSON.
    public static let countsPrefix = "attack counts "

    /// Attacks 127.0.0.1:`port` as `plan` says, for at most `limit`.
    public static func run(plan: RelayAttackPlan, port: UInt16, limit: Duration) throws {
        let attackers = try RelayAttackers(plan: plan, port: port, limit: limit)
        attackers.start()
        print(readyLine)
        fflush(nil)
        let stopped = DispatchSemaphore(value: 0)
        let reader = Thread {
            while let line = readLine(), line != "stop" {}
            stopped.signal()
        }
        reader.start()
        _ = stopped.wait(timeout: .now() + .seconds(Int(limit.components.seconds)))
        attackers.stop()
        let counts = try JSONEncoder().encode(attackers.statistics)
        print(countsPrefix + String(decoding: counts, as: UTF8.self))
        fflush(nil)
    }
}

/// What the attackers did, and what the relay did to them.
public struct RelayAttackCounts: Sendable, Hashable, Codable {
    /// Bytes written to the relay over TCP.
    public var bytesSent = 0
    /// Frames written over TCP.
    public var framesSent = 0
    /// Datagrams sent.
    public var datagramsSent = 0
    /// TCP connections opened (reconnections included).
    public var connectionsOpened = 0
    /// Connections the relay closed or reset.
    public var connectionsCut = 0
    /// Handshakes the relay refused or did not answer in time.
    public var handshakesFailed = 0
    /// Frames the fan-out members received.
    public var framesReceived = 0

    /// Nothing yet.
    public init() {}
}

/// Runs a `RelayAttackPlan` against a relay on loopback, one thread per kind of attack, until
/// `stop()` or its deadline, whichever comes first: every loop is bounded in time, and each
/// attacker's dose in bytes.
final class RelayAttackers: Sendable {
    let plan: RelayAttackPlan
    let address: SocketAddress
    /// Where the attackers' TCP connections come from: 127.0.0.2, an address of their own on
    /// loopback (all of 127/8 is), as an attacker elsewhere has one apart from the honest
    /// participants' 127.0.0.1; what the relay does per source address then falls on them.
    private let source: SocketAddress
    private let deadline: Int64
    let clock = SystemClock()
    private let stopping = Atomic<Bool>(false)
    private let counts = Mutex(RelayAttackCounts())
    private let group = DispatchGroup()

    /// Attackers of the relay at `port` on 127.0.0.1 that stop by themselves after `limit`.
    init(plan: RelayAttackPlan, port: UInt16, limit: Duration) throws {
        self.plan = plan
        address = try SocketAddress(host: "127.0.0.1", port: port)
        source = try SocketAddress(host: "127.0.0.2", port: 0)
        deadline = SystemClock().instant().nanoseconds + Int64(limit.components.seconds) * 1_000_000_000
    }

    /// What they have done so far.
    var statistics: RelayAttackCounts { counts.withLock { $0 } }

    /// Starts every attack on a thread of its own.
    func start() {
        launch("attack-unread") { $0.neverReadingAttack() }
        launch("attack-partial") { $0.partialFrameAttack() }
        launch("attack-fanout") { $0.fanOutAttack() }
        launch("attack-udp") { $0.datagramAttack() }
        launch("attack-idle") { $0.idleSocketAttack() }
        launch("attack-memory") { $0.memoryHogAttack() }
    }

    /// Stops every attack and waits for the threads (at most a few seconds: each loop checks).
    func stop() {
        stopping.store(true, ordering: .relaxed)
        _ = group.wait(timeout: .now() + 30)
    }

    var running: Bool { !stopping.load(ordering: .relaxed) && clock.instant().nanoseconds < deadline }

    private func launch(_ name: String, _ body: @escaping @Sendable (RelayAttackers) -> Void) {
        group.enter()
        let thread = Thread { [self] in
            body(self)
            group.leave()
        }
        thread.name = name
        thread.start()
    }

    func count(_ update: (inout RelayAttackCounts) -> Void) { counts.withLock { update(&$0) } }

    // MARK: The attacks

    /// Own sessions, large proposals, acknowledgements through 2^64-1, never a read.
    private func neverReadingAttack() {
        guard plan.neverReading > 0 else { return }
        var slots = [AttackConnection?](repeating: nil, count: plan.neverReading)
        var sequences = [UInt64](repeating: 0, count: plan.neverReading)
        var sentBytes = [Int](repeating: 0, count: plan.neverReading)
        var sentFrames = [Int](repeating: 0, count: plan.neverReading)
        let body = [UInt8](repeating: 0xA5, count: plan.neverReadingBody)
        let start = clock.instant().nanoseconds
        while running {
            for index in slots.indices where sentBytes[index] < plan.neverReadingBytes {
                if slots[index] == nil {
                    slots[index] = join(session: UUID(), sessionKey: SigningKeyPair(), create: true)
                    sequences[index] = 0
                    if slots[index] == nil { continue }
                }
                guard let connection = slots[index] else { continue }
                let due = Int(Double(clock.instant().nanoseconds - start) / 1e9 * Double(plan.neverReadingRate))
                do {
                    while sentFrames[index] < due, sentBytes[index] < plan.neverReadingBytes, connection.pendingBytes < 512 * 1024 {
                        sequences[index] += 1
                        connection.queue(.proposal(sequence: sequences[index], body: body))
                        if sequences[index] % 16 == 0 { connection.queue(.ack(UInt64.max)) }
                        sentFrames[index] += 1
                        sentBytes[index] += body.count
                    }
                    try flush(connection)
                } catch {
                    count { $0.connectionsCut += 1 }
                    slots[index] = nil
                }
            }
            pause(microseconds: 1_000)
        }
    }

    /// Almost complete frames of the largest length from connections that never authenticate.
    private func partialFrameAttack() {
        guard plan.partialFrames > 0 else { return }
        var slots = [AttackConnection?](repeating: nil, count: plan.partialFrames)
        let length = RelayWireLimits.maximumFrameLength
        var frame: [UInt8] = [UInt8(length >> 24 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
        frame += [RelayFrame.version, 1]
        frame += [UInt8](repeating: 0, count: length - 3)
        while running {
            for index in slots.indices {
                if slots[index] == nil {
                    guard let connection = connect() else { continue }
                    connection.queueRaw(frame)
                    slots[index] = connection
                }
                guard let connection = slots[index] else { continue }
                do {
                    try flush(connection)
                    // The relay says nothing before a hello; reading only finds out whether it
                    // has cut the connection.
                    _ = try connection.readAvailable(limit: 64 * 1024)
                } catch {
                    count { $0.connectionsCut += 1 }
                    slots[index] = nil
                }
            }
            pause(microseconds: 5_000)
        }
    }

    /// One session whose senders flood small reliable messages to everyone at the flood limit;
    /// every member reads and acknowledges, so that the relay's cost is fan-out, not memory.
    private func fanOutAttack() {
        guard plan.fanOutMembers > 1 else { return }
        let session = UUID()
        let sessionKey = SigningKeyPair()
        var members: [AttackConnection] = []
        for index in 0..<plan.fanOutMembers {
            guard running, let member = join(session: session, sessionKey: sessionKey, create: index == 0) else { continue }
            members.append(member)
        }
        var sequences = [UInt64](repeating: 0, count: members.count)
        var sent = [Int](repeating: 0, count: members.count)
        var alive = [Bool](repeating: true, count: members.count)
        let body = [UInt8](repeating: 0x5A, count: plan.fanOutBody)
        let start = clock.instant().nanoseconds
        while running {
            let elapsed = Double(clock.instant().nanoseconds - start) / 1e9
            for (index, member) in members.enumerated() where alive[index] {
                do {
                    if index < plan.fanOutSenders {
                        let due = Int(elapsed * Double(plan.fanOutRate))
                        while sent[index] < due, member.pendingBytes < 256 * 1024 {
                            sequences[index] += 1
                            member.queue(.message(sequence: sequences[index], recipients: .everyone, reliable: true, body: body))
                            sent[index] += 1
                        }
                    }
                    try flush(member)
                    let received = try member.readAvailable(limit: 1 << 20)
                    if received > 0 {
                        count { $0.framesReceived += received }
                        if let highest = member.highestDelivery { member.queue(.ack(highest)) }
                    }
                } catch {
                    count { $0.connectionsCut += 1 }
                    alive[index] = false
                }
            }
            // A sender behind its schedule (the relay reads it no faster) does not catch up in
            // a burst later: the offer is the flood limit, never more.
            for index in 0..<min(plan.fanOutSenders, members.count) { sent[index] = max(sent[index], Int(elapsed * Double(plan.fanOutRate)) - plan.fanOutRate / 10) }
            pause(microseconds: 500)
        }
    }

    /// Registrations with tokens the relay never issued, from many UDP sockets.
    private func datagramAttack() {
        guard plan.datagramSockets > 0 else { return }
        let sockets = (0..<plan.datagramSockets).compactMap { _ in try? UDPSocket(family: AF_INET) }
        var sent = [Int](repeating: 0, count: sockets.count)
        var buffer = [UInt8](repeating: 0, count: 2048)
        let start = clock.instant().nanoseconds
        while running {
            let due = Int(Double(clock.instant().nanoseconds - start) / 1e9 * Double(plan.datagramRate))
            var datagrams = 0
            for (index, socket) in sockets.enumerated() {
                while sent[index] < due {
                    let registration = RelayDatagram.register(token: RelayAuthenticator.randomBytes(RelayWireLimits.tokenLength)).encoded()
                    guard (try? socket.send(registration, to: address)) == true else { break }
                    sent[index] += 1
                    datagrams += 1
                }
                while (try? socket.receive(into: &buffer)) != nil {}
            }
            let total = datagrams
            count { $0.datagramsSent += total }
            pause(microseconds: 1_000)
        }
    }

    // MARK: Connections

    func connect() -> AttackConnection? {
        guard let connection = try? AttackConnection(address: address, source: source, clock: clock) else { return nil }
        count { $0.connectionsOpened += 1 }
        return connection
    }

    /// A connection admitted to `session` (created with `sessionKey` as its verifier, or proven
    /// with it), or nil.
    func join(session: UUID, sessionKey: SigningKeyPair, create: Bool) -> AttackConnection? {
        guard let connection = connect() else { return nil }
        do {
            try connection.handshake(session: session, sessionKey: sessionKey, create: create)
            return connection
        } catch {
            count { $0.handshakesFailed += 1 }
            return nil
        }
    }

    func flush(_ connection: AttackConnection) throws {
        let (bytes, frames) = try connection.flush()
        if bytes > 0 || frames > 0 {
            count {
                $0.bytesSent += bytes
                $0.framesSent += frames
            }
        }
    }

    func pause(microseconds: Int) {
        var request = timespec(tv_sec: 0, tv_nsec: microseconds * 1_000)
        _ = nanosleep(&request, nil)
    }
}
