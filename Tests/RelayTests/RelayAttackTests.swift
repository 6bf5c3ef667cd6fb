import Foundation
import Synchronization
import TandemNet
import TandemTestKit
import TandemHarness
import TandemWire
import Testing

/// The attacks on resources against the real relay as its own `tandem serve` process on
/// loopback, bounded in count and time: what must hold is that the relay's resident memory
/// stays within its `--memory-limit` and that an honest pair in another session keeps
/// delivering everything. Every client connects from 127.0.0.1; the caps per address are the
/// defaults (64 sessions, 256 connections), which these attacks stay under.
@Suite("Relay under attack (tandem serve)", .serialized)
struct RelayAttackProcessTests {
    static let memoryLimit = 160 * 1024 * 1024

    @Test("never-reading flooders with forged acks and big bodies: memory within the limit, the honest pair loses nothing")
    func flooders() async throws {
        // The budget counts what the relay holds; the process is that plus its own footprint (a
        // debug build's code and runtime, the allocator's slack: about 30 MiB here). With 160M as the
        // budget the peak came within 5 % of 160 MiB either way from run to run, so the budget is
        // 128M and the resident memory must stay within 160 MiB: the budget and the footprint.
        let relay = try ServeProcess(arguments: ["--memory-limit", "128M", "--stats-interval", "1"])
        defer { relay.stop() }
        let sampler = ResidentMemorySampler(pid: relay.pid)
        defer { sampler.stop() }

        let (alice, bob) = try await honestPair(port: relay.port)
        let attackers = Mutex(AttackTally())
        let done = Mutex(false)
        // Four flooders, each in a session of its own, for a few rounds: propose 256 KiB bodies
        // and message them to a silent second member, never reading; one in each round also
        // acknowledges what it was never sent.
        let port = relay.port
        let threads = (0..<4).map { index in
            JoinableThread {
                for round in 0..<3 where !done.withLock({ $0 }) {
                    let outcome = RelayAttackProcessTests.flood(port: port, forgeAck: round == 1 && index == 0,
                                                         for: .seconds(2.5))
                    attackers.withLock { $0.add(outcome) }
                }
            }
        }
        for thread in threads { thread.start() }

        // The honest pair keeps talking while the flood goes on.
        var sent: [String] = []
        for index in 0..<150 {
            let text = "honest \(index)"
            try alice.link.send(Array(text.utf8), to: .everyone, reliable: true)
            sent.append(text)
            try await Task.sleep(for: .milliseconds(40))
        }
        let received = await bob.recorder.waitForMessages(sent.count, reliable: true, timeout: .seconds(30))
        done.withLock { $0 = true }
        for thread in threads { await thread.join() }

        #expect(received == sent, "the honest pair lost or reordered messages: \(received.count) of \(sent.count)")
        let peak = sampler.stop()
        #expect(peak > 0, "no VmRSS samples")
        #expect(peak <= RelayAttackProcessTests.memoryLimit, "VmRSS peaked at \(peak) bytes over the limit of \(RelayAttackProcessTests.memoryLimit)")
        let tally = attackers.withLock { $0 }
        #expect(tally.dropped > 0, "the flooders were never dropped: \(tally)")
        #expect(tally.forgedAckDropped, "the forged ack was not answered with a violation: \(tally)")
        #expect(relay.isRunning, "the relay exited")
        print("flooders: VmRSS peak \(peak / 1_048_576) MiB of \(RelayAttackProcessTests.memoryLimit / 1_048_576) MiB; \(tally)")
    }

    @Test("a stranger's partial frame is cut at the unauthenticated buffer; 5,000 tiny messages to 20 silent members do not stop another session")
    func strangersAndSilentMembers() async throws {
        let relay = try ServeProcess(arguments: ["--memory-limit", "160M"])
        defer { relay.stop() }
        let (alice, bob) = try await honestPair(port: relay.port)

        // A length prefix of 1 MiB and 200 KiB of it: the relay holds no more than 128 KiB
        // for a stranger and drops it.
        let stranger = try RawRelayClient(port: relay.port)
        try stranger.send([0x00, 0x10, 0x00, 0x00] + [UInt8](repeating: 1, count: 200 * 1024))
        let cut = stranger.framesUntilClosed(timeout: .seconds(10))
        #expect(cut.closed, "the stranger was not cut off")
        #expect(cut.frames.contains { if case let .error(fault) = $0 { fault.code == .tooLarge } else { false } })

        // A hello with the largest activity description still fits.
        let creator = try RawRelayClient(port: relay.port)
        let session = UUID()
        let key = [UInt8](repeating: 3, count: 32)
        try creator.admit(session: session, key: key, create: true, activity: [UInt8](repeating: 2, count: RelayWireLimits.maximumMetadata))

        // Twenty members that never read nor acknowledge, and 5,000 tiny messages to them.
        let silent = try (0..<20).map { _ in
            let member = try RawRelayClient(port: relay.port)
            try member.admit(session: session, key: key, create: false)
            return member
        }
        var burst: [UInt8] = []
        for sequence in UInt64(1)...5_000 {
            burst += RelayFrame.message(sequence: sequence, recipients: .everyone, reliable: true, body: [UInt8(sequence & 0xFF)]).encoded()
        }
        let bytes = burst
        let sender = UncheckedBox(creator)
        let flood = JoinableThread { try? sender.value.send(bytes) }
        flood.start()
        // Meanwhile the other session is served.
        var sent: [String] = []
        for index in 0..<50 {
            let text = "still served \(index)"
            try alice.link.send(Array(text.utf8), to: .everyone, reliable: true)
            sent.append(text)
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(await bob.recorder.waitForMessages(sent.count, reliable: true, timeout: .seconds(30)) == sent)
        await flood.join()
        #expect(relay.isRunning)
        withExtendedLifetime(silent) {}
    }

    @Test("a 20 MiB load to a reader throttled to about 40 Mbit/s completes through a 4 MiB output queue")
    func slowReaderLoad() throws {
        // The output queue is capped far below the load: queued whole, the load would drop the
        // reader; streamed as it drains, it completes.
        let relay = try ServeProcess(arguments: ["--max-output-queue", "4M"])
        defer { relay.stop() }
        // Everything is built before connecting: a connection silent for 15 s is dropped.
        let size = 20 * 1024 * 1024
        var data = [UInt8](repeating: 0, count: size)
        data.withUnsafeMutableBufferPointer { bytes in
            for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 7 &+ index >> 12) }
        }
        let entry = RelayAttachmentEntry(id: UUID(), owner: UUID(), size: size, metadata: [1, 2, 3])
        var upload = RelayFrame.attachmentAdd(sequence: 1, entry: entry).encoded()
        var sequence: UInt64 = 1
        for offset in stride(from: 0, to: size, by: RelayWireLimits.attachmentChunkSize) {
            sequence += 1
            let end = min(offset + RelayWireLimits.attachmentChunkSize, size)
            upload += RelayFrame.attachmentChunk(sequence: sequence, id: entry.id, data: data[offset..<end]).encoded()
        }
        let session = UUID()
        let key = [UInt8](repeating: 4, count: 32)
        let uploader = try RawRelayClient(port: relay.port)
        try uploader.admit(session: session, key: key, create: true)
        try uploader.send(upload)
        var added = false
        while !added, let frame = try uploader.nextFrame(timeout: .seconds(30)) {
            if case let .outcome(_, request, fault) = frame, request == 1 {
                #expect(fault == nil)
                added = true
            }
        }
        #expect(added)

        let reader = try RawRelayClient(port: relay.port)
        try reader.admit(session: session, key: key, create: false)
        try reader.send(RelayFrame.loadRequest(sequence: 1, id: entry.id).encoded())
        var loaded: [UInt8] = []
        loaded.reserveCapacity(size)
        var finished = false
        var lastSequence: UInt64 = 0
        let started = ContinuousClock.now
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        // About 5 MB/s: 16 KiB every 3 ms; bounded at 60 s.
        while !finished, ContinuousClock.now - started < .seconds(60) {
            guard let count = try reader.socket.read(into: &buffer) else {
                Thread.sleep(forTimeInterval: 0.003)
                continue
            }
            guard count > 0 else { break }
            reader.reader.append(buffer[..<count])
            while let frame = try reader.reader.next() {
                if let number = frame.sequence { lastSequence = number }
                switch frame {
                case let .loadChunk(_, 1, chunk): loaded += chunk
                case let .outcome(_, 1, fault):
                    #expect(fault == nil)
                    finished = true
                case let .error(fault): Issue.record("dropped: \(fault)")
                default: break
                }
            }
            do {
                if lastSequence > 0 { try reader.send(RelayFrame.ack(lastSequence).encoded()) }
            } catch {
                Issue.record("reader cut after \(loaded.count) bytes, \(ContinuousClock.now - started): \(error)")
                break
            }
            Thread.sleep(forTimeInterval: 0.003)
        }
        #expect(finished, "the load did not complete: \(loaded.count) of \(size) bytes")
        #expect(loaded == data)
        #expect(relay.isRunning)
    }

    @Test("out of descriptors, accept backs off instead of spinning, and serves again once some close")
    func acceptBackoff() async throws {
        let relay = try ServeProcess(arguments: ["--stats-interval", "0.5"], descriptorLimit: 48)
        defer { relay.stop() }
        // More connections than the relay has descriptors for; they wait in the backlog or fail.
        var strangers: [RawRelayClient] = []
        for _ in 0..<60 {
            guard let client = try? RawRelayClient(port: relay.port) else { break }
            strangers.append(client)
        }
        try await Task.sleep(for: .milliseconds(500))
        let before = try #require(RelayUploadCostMeasurementProcessTests.cpuSeconds(of: relay.pid))
        try await Task.sleep(for: .seconds(2))
        let cpu = try #require(RelayUploadCostMeasurementProcessTests.cpuSeconds(of: relay.pid)) - before
        // A relay spinning on accept would use about a core for these two seconds.
        #expect(cpu < 0.5, "the relay used \(cpu) s of CPU in 2 s while out of descriptors")
        // The count as the statistics lines report it, the largest of them (a line may arrive in
        // two pieces); the relay prints one every half second, so a few more are waited for.
        func failures() -> Int {
            relay.printedText.split(separator: "\n").compactMap { line -> Int? in
                guard let range = line.range(of: "accept failures ") else { return nil }
                return Int(line[range.upperBound...].prefix { $0.isNumber })
            }.max() ?? 0
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while failures() == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
        #expect(failures() > 0, "no accept failure was counted: \(relay.printedText.suffix(400))")
        // Descriptors come back: an honest pair joins and talks.
        for stranger in strangers { stranger.socket.shutdown() }
        strangers.removeAll()
        let (alice, bob) = try await honestPair(port: relay.port)
        try alice.link.send(Array("back".utf8), to: .everyone, reliable: true)
        #expect(await bob.recorder.waitForMessages(1, reliable: true, timeout: .seconds(20)) == ["back"])
        #expect(relay.isRunning)
        print("accept backoff: \(String(format: "%.3f", cpu)) s CPU in 2 s out of descriptors")
    }

    // MARK: Helpers

    private func honestPair(port: UInt16) async throws -> (Member, Member) {
        let connector = NetworkRelayConnector(host: "127.0.0.1", port: port)
        let session = UUID()
        let alice = Member(link: try await connector.join(RelayHarness.request(session, "alice", create: true)))
        let bob = Member(link: try await connector.join(RelayHarness.request(session, "bob")))
        return (alice, bob)
    }

    /// What the flooders saw.
    struct AttackTally: CustomStringConvertible {
        var rounds = 0
        var dropped = 0
        var forgedAckDropped = false
        var bytesSent = 0

        mutating func add(_ outcome: FloodOutcome) {
            rounds += 1
            if outcome.dropped { dropped += 1 }
            if outcome.forgedAckDropped { forgedAckDropped = true }
            bytesSent += outcome.bytesSent
        }

        var description: String { "\(rounds) rounds, \(dropped) dropped, \(bytesSent / 1_048_576) MiB sent" }
    }

    struct FloodOutcome {
        var dropped = false
        var forgedAckDropped = false
        var bytesSent = 0
    }

    /// One flooder's round: a session of its own with a silent second member, then 256 KiB
    /// proposals and messages as fast as the socket takes them, reading nothing, for at most
    /// `duration` or until the relay drops it.
    static func flood(port: UInt16, forgeAck: Bool, for duration: Duration) -> FloodOutcome {
        var outcome = FloodOutcome()
        guard let client = try? RawRelayClient(port: port), let member = try? RawRelayClient(port: port) else { return outcome }
        let session = UUID()
        let key = [UInt8](repeating: 9, count: 32)
        guard (try? client.admit(session: session, key: key, create: true)) != nil,
              (try? member.admit(session: session, key: key, create: false)) != nil else { return outcome }
        if forgeAck {
            try? client.send(RelayFrame.ack(UInt64.max).encoded())
            let answer = client.framesUntilClosed(timeout: .seconds(5))
            outcome.forgedAckDropped = answer.closed && answer.frames.contains {
                if case let .error(fault) = $0 { fault.code == .protocolViolation } else { false }
            }
            outcome.dropped = answer.closed
            return outcome
        }
        let body = [UInt8](repeating: 0xAB, count: 256 * 1024)
        let deadline = ContinuousClock.now + duration
        var sequence: UInt64 = 0
        while ContinuousClock.now < deadline {
            sequence += 1
            let frame: RelayFrame = sequence.isMultiple(of: 2)
                ? .proposal(sequence: sequence, body: body)
                : .message(sequence: sequence, recipients: .everyone, reliable: true, body: body)
            do {
                let bytes = frame.encoded()
                if try !client.sendWithin(bytes, timeout: .milliseconds(500)) { continue }
                outcome.bytesSent += bytes.count
            } catch {
                outcome.dropped = true
                break
            }
        }
        if !outcome.dropped { outcome.dropped = client.framesUntilClosed(timeout: .milliseconds(200)).closed }
        client.socket.shutdown()
        member.socket.shutdown()
        return outcome
    }
}

extension RawRelayClient {
    /// Sends all of `bytes` unless the socket stays full for `timeout`; false then. Throws
    /// when the relay has closed the connection.
    func sendWithin(_ bytes: [UInt8], timeout: Duration) throws -> Bool {
        var offset = 0
        var stalled = ContinuousClock.now
        while offset < bytes.count {
            if let written = try socket.write(bytes[offset...]) {
                offset += written
                stalled = ContinuousClock.now
            } else if ContinuousClock.now - stalled > timeout {
                return offset == bytes.count
            } else {
                Thread.sleep(forTimeInterval: 0.001)
            }
        }
        return true
    }
}

/// A value handed to one other thread, which alone uses it from then on.
final class UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Samples a process's resident memory (VmRSS in /proc/PID/status) every 20 ms on a thread of
/// its own, keeping the peak, until stopped.
final class ResidentMemorySampler: Sendable {
    private final class State: Sendable {
        let peak = Mutex(0)
        let running = Mutex(true)
    }

    private let state = State()

    init(pid: Int32) {
        let state = state
        let thread = Thread {
            // Bounded: at most five minutes of samples.
            for _ in 0..<15_000 where state.running.withLock({ $0 }) {
                if let rss = ResidentMemorySampler.residentBytes(of: pid) { state.peak.withLock { $0 = max($0, rss) } }
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        thread.start()
    }

    /// Stops sampling; the peak in bytes.
    @discardableResult
    func stop() -> Int {
        state.running.withLock { $0 = false }
        return state.peak.withLock { $0 }
    }

    static func residentBytes(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { return nil }
        return kilobytes * 1024
    }
}
