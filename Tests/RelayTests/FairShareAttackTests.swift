import Foundation
import Synchronization
import TandemHarness
import TandemNet
import TandemTestKit
import TandemWire
import Testing

/// A stranger or an invitee trying to shut the relay's doors, against the real relay as its own
/// `tandem serve` process on loopback, bounded in count and time. The attackers connect from
/// sources of their own (127.0.0.2 and up: on loopback every 127/8 address is this host); the
/// honest from 127.0.0.1. What must hold: every honest create, join and upload that fits its
/// share is admitted while the attackers hold theirs.
@Suite("Relay fair shares under attack (tandem serve)", .serialized)
struct FairShareAttackProcessTests {
    private static let key = [UInt8](repeating: 5, count: 32)

    /// A raw client connecting from `host` (a loopback address of the test's) to `port`.
    private static func client(from host: String, port: UInt16) throws -> RawRelayClient {
        let socket = try TCPSocket(family: AF_INET)
        try socket.bind(to: SocketAddress(host: host, port: 0))
        return try RawRelayClient(socket: socket, connectingTo: SocketAddress(host: "127.0.0.1", port: port))
    }

    /// Creates or joins `count` sessions as honest people do; how many were refused, and why.
    private static func honestAdmissions(port: UInt16, count: Int) async -> [String] {
        let connector = NetworkRelayConnector(host: "127.0.0.1", port: port)
        var refusals: [String] = []
        for index in 0..<count {
            let session = UUID()
            do {
                let host = try await connector.join(RelayHarness.request(session, "host \(index)", create: true))
                let guest = try await connector.join(RelayHarness.request(session, "guest \(index)"))
                await host.leave()
                await guest.leave()
            } catch {
                refusals.append("\(error)")
            }
        }
        return refusals
    }

    @Test("idle sockets from four sources cannot keep anyone out; a socket that sends nothing is closed after the hello timeout")
    func unadmittedPlaces() async throws {
        let relay = try ServeProcess(arguments: ["--max-unauthenticated", "24", "--max-unauthenticated-per-source", "8",
                                                 "--hello-timeout", "1.5"])
        defer { relay.stop() }
        let port = relay.port
        // Four sources keep opening idle sockets (refused ones closed at once) for as long as
        // the honest admissions go on, bounded at 20 s and 2,000 sockets.
        let done = Mutex(false)
        let opened = Mutex(0)
        let attackers = (2...5).map { last in
            JoinableThread {
                var held: [RawRelayClient] = []
                let deadline = ContinuousClock.now + .seconds(20)
                while !done.withLock({ $0 }), ContinuousClock.now < deadline, opened.withLock({ $0 }) < 2_000 {
                    if let client = try? FairShareAttackProcessTests.client(from: "127.0.0.\(last)", port: port) {
                        held.append(client)
                        opened.withLock { $0 += 1 }
                    }
                    if held.count > 40 { held.removeFirst(held.count - 40) }
                    Thread.sleep(forTimeInterval: 0.005)
                }
                for client in held { client.socket.shutdown() }
            }
        }
        for attacker in attackers { attacker.start() }
        try await Task.sleep(for: .milliseconds(300))
        let refusals = await FairShareAttackProcessTests.honestAdmissions(port: port, count: 15)
        done.withLock { $0 = true }
        #expect(refusals.isEmpty, "honest admissions refused: \(refusals)")
        #expect(opened.withLock { $0 } >= 32, "the attackers opened \(opened.withLock { $0 }) sockets")

        // A socket that sends nothing hears why and is closed, well before the handshake timeout.
        let silent = try FairShareAttackProcessTests.client(from: "127.0.0.9", port: port)
        let started = ContinuousClock.now
        let answer = silent.framesUntilClosed(timeout: .seconds(8))
        #expect(answer.closed, "the silent socket was never closed")
        #expect(ContinuousClock.now - started < .seconds(6))
        #expect(answer.frames.contains { if case let .refusal(fault) = $0 { fault.text.contains("hello") } else { false } })
        for attacker in attackers { await attacker.join() }
        #expect(relay.isRunning)
    }

    /// Uploads `size` bytes as one attachment through `client` (whose next sequence number is
    /// `sequence`); the outcome's fault (nil: stored) and the frames read meanwhile.
    private static func upload(_ client: RawRelayClient, size: Int, sequence: inout UInt64) throws -> (fault: RelayFault?, frames: [RelayFrame]) {
        let entry = RelayAttachmentEntry(id: UUID(), owner: UUID(), size: size, metadata: [])
        sequence += 1
        let request = sequence
        try client.send(RelayFrame.attachmentAdd(sequence: request, entry: entry).encoded())
        var sent = 0
        while sent < size {
            let count = min(RelayWireLimits.attachmentChunkSize, size - sent)
            sequence += 1
            try client.send(RelayFrame.attachmentChunk(sequence: sequence, id: entry.id, data: [UInt8](repeating: 0x5A, count: count)[...]).encoded())
            sent += count
        }
        var frames: [RelayFrame] = []
        while let frame = try client.nextFrame(timeout: .seconds(20)) {
            frames.append(frame)
            if case let .outcome(_, answered, fault) = frame, answered == request { return (fault, frames) }
        }
        throw RawRelayClientError.refused("closed before the upload's outcome, after \(frames.map(\.typeName))")
    }

    @Test("a stranger's uploads fill the memory budget; honest creates and joins are admitted and an honest upload within its share is stored")
    func memoryShares() async throws {
        let relay = try ServeProcess(arguments: ["--memory-limit", "48M"])
        defer { relay.stop() }
        // The stranger's own session, and attachments until the budget refuses more.
        let stranger = try FairShareAttackProcessTests.client(from: "127.0.0.2", port: relay.port)
        try stranger.admit(session: UUID(), key: FairShareAttackProcessTests.key, create: true)
        var strangerSequence: UInt64 = 0
        var stored = 0
        for _ in 0..<5 {
            guard try FairShareAttackProcessTests.upload(stranger, size: 12 * 1024 * 1024, sequence: &strangerSequence).fault == nil else { break }
            stored += 1
        }
        #expect(stored >= 3, "the stranger stored \(stored) attachments of 12 MiB")
        let refused = try FairShareAttackProcessTests.upload(stranger, size: 12 * 1024 * 1024, sequence: &strangerSequence).fault
        #expect(refused?.code == .limitReached, "the stranger's source is past its share: \(String(describing: refused))")

        let refusals = await FairShareAttackProcessTests.honestAdmissions(port: relay.port, count: 10)
        #expect(refusals.isEmpty, "honest admissions refused: \(refusals)")

        // An honest upload within its share is stored: the stranger's newest attachments give way.
        let honest = try RawRelayClient(port: relay.port)
        try honest.admit(session: UUID(), key: FairShareAttackProcessTests.key, create: true, name: "honest")
        var honestSequence: UInt64 = 0
        let outcome = try FairShareAttackProcessTests.upload(honest, size: 16 * 1024 * 1024, sequence: &honestSequence)
        #expect(outcome.fault == nil, "the honest upload was refused: \(String(describing: outcome.fault))")
        let removed = stranger.framesUntilClosed(timeout: .seconds(1)).frames.filter { if case .attachmentRemoved = $0 { true } else { false } }
        #expect(!removed.isEmpty, "the stranger was not told its attachments went")
        #expect(relay.isRunning)
    }

    @Test("invitees keeping the session's fan-out in debt: the honest host and joiner lose nothing and are not dropped")
    func fanoutDebt() async throws {
        let relay = try ServeProcess(arguments: ["--fanout-deliveries", "3000", "--stats-interval", "1"])
        defer { relay.stop() }
        let connector = NetworkRelayConnector(host: "127.0.0.1", port: relay.port)
        let session = UUID()
        let alice = Member(link: try await connector.join(RelayHarness.request(session, "alice", key: FairShareAttackProcessTests.key, create: true)))
        let bob = Member(link: try await connector.join(RelayHarness.request(session, "bob", key: FairShareAttackProcessTests.key)))
        // Ten invitees send to everyone as fast as the relay reads them, for at most 4 s, and
        // read (without acknowledging) what they are sent.
        let done = Mutex(false)
        let port = relay.port
        let invitees = (0..<10).map { index in
            JoinableThread {
                guard let client = try? FairShareAttackProcessTests.client(from: "127.0.0.\(10 + index)", port: port),
                      (try? client.admit(session: session, key: FairShareAttackProcessTests.key, create: false, name: "invitee \(index)")) != nil else { return }
                let deadline = ContinuousClock.now + .seconds(4)
                var sequence: UInt64 = 0
                var buffer = [UInt8](repeating: 0, count: 65_536)
                while !done.withLock({ $0 }), ContinuousClock.now < deadline {
                    sequence += 1
                    let frame = RelayFrame.message(sequence: sequence, recipients: .everyone, reliable: true, body: [UInt8](repeating: 1, count: 64))
                    guard (try? client.sendWithin(frame.encoded(), timeout: .milliseconds(50))) != nil else { break }
                    while let count = try? client.socket.read(into: &buffer), count > 0 {}
                }
                client.socket.shutdown()
            }
        }
        for invitee in invitees { invitee.start() }
        try await Task.sleep(for: .milliseconds(500))
        var sent: [String] = []
        for index in 0..<40 {
            let text = "honest \(index)"
            try alice.link.send(Array(text.utf8), to: .only([bob.id]), reliable: true)
            sent.append(text)
            try await Task.sleep(for: .milliseconds(50))
        }
        // Bob hears the invitees too: what counts is alice's lines, all of them, in order.
        let recorder = bob.recorder
        let count = sent.count
        let honest = { @Sendable in recorder.messages(reliable: true).filter { $0.hasPrefix("honest ") } }
        await recorder.wait(timeout: .seconds(20)) { _ in honest().count >= count }
        let received = honest()
        done.withLock { $0 = true }
        for invitee in invitees { await invitee.join() }
        #expect(received == sent, "bob got \(received.count) of \(sent.count)")
        let left = bob.recorder.events.contains { if case let .participantLeft(id) = $0 { id == alice.id } else { false } }
        #expect(!left, "alice was dropped")
        let pauses = relay.printedText.split(separator: "\n").compactMap { line -> Int? in
            guard let range = line.range(of: "fan-out pauses ") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        #expect((pauses.max() ?? 0) > 0, "the session's fan-out was never in debt: \(pauses)")
        #expect(relay.isRunning)
    }
}
