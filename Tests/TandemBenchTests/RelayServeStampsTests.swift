import Foundation
import Testing
import TandemClock
import TandemHarness
import TandemNet
@testable import TandemBench

/// A window between two of the relay's readings: the second's figures, the loop's CPU over the
/// window less what reading error queues took, the recipients' count.
@Suite struct RelayServeStampsTests {
    @Test func aWindowIsTheDifferenceOfTwoReadingsLessTheDraining() throws {
        let cost = RelayBenchmarkReport.KernelCost(ledger: RelayTimestampLedger(), cpu: nil, drain: nil, frames: 7, delivered: 0, clients: [])
        let start = RelayServeStamps.Reading(cost: cost, loopCPUSeconds: 2.0, drainSeconds: 0.25, failures: 0)
        let end = RelayServeStamps.Reading(cost: cost, loopCPUSeconds: 2.5, drainSeconds: 0.35, failures: 0)
        let window = RelayServeStamps.window(from: start, to: end, delivered: 200)
        #expect(abs((window.cpuSeconds ?? 0) - 0.4) < 1e-12)
        #expect(abs((window.drainSeconds ?? 0) - 0.1) < 1e-12)
        #expect(window.delivered == 200)
        #expect(abs((window.cpuMicrosecondsPerDelivery ?? 0) - 2_000) < 1e-6)
        #expect(window.frames == 7)

        // A loop whose CPU time could not be read leaves the window's unknown.
        let unread = RelayServeStamps.Reading(cost: cost, loopCPUSeconds: nil, drainSeconds: 0.35, failures: 0)
        #expect(RelayServeStamps.window(from: start, to: unread, delivered: 1).cpuSeconds == nil)
    }

    @Test func anAnsweringLineIsReadBackAndAnyOtherIsNot() throws {
        let cost = RelayBenchmarkReport.KernelCost(ledger: RelayTimestampLedger(), cpu: nil, drain: nil, frames: 3, delivered: 0, clients: [])
        let reading = RelayServeStamps.Reading(cost: cost, loopCPUSeconds: 1.5, drainSeconds: 0.5, failures: 2)
        let line = RelayServeStamps.prefix + String(decoding: try JSONEncoder().encode(reading), as: UTF8.self)
        let back = try #require(RelayServeStamps.reading(line))
        #expect(back.loopCPUSeconds == 1.5 && back.drainSeconds == 0.5 && back.failures == 2 && back.cost.frames == 3)
        #expect(RelayServeStamps.reading("stamps {}") == nil)
        #expect(RelayServeStamps.reading("relay listening on 127.0.0.1:1") == nil)
    }
}

/// `tandem serve --measure-kernel` as the adversarial bench runs it: a relay process that stamps
/// what it forwards by the kernel's clocks and answers each `stamps` line with what it saw since
/// the last.
@Suite struct RelayServeStampsProcessTests {
    @Test func theRelayProcessAnswersWithWhatItForwardedSinceTheLastReading() async throws {
        let (relay, sender, receiver) = try await pairSending(5, measuring: ["--measure-kernel"])
        defer { relay.kill() }
        let messages = 5
        let first = try #require(reading(relay, answer: 1), "\(relay.lines)")
        #expect(first.cost.records >= messages)
        #expect(first.cost.copies >= messages)
        let sent = try #require(first.cost.toDevice)
        #expect(sent.count >= messages && sent.p99 > 0 && sent.p99 < 1e9, "arrival → sent in nanoseconds: \(sent)")
        #expect((first.loopCPUSeconds ?? 0) > 0)

        // Taken: the next reading starts empty, and the loop's CPU time only grows.
        let second = try #require(reading(relay, answer: 2), "\(relay.lines)")
        #expect(second.cost.records == 0 && second.cost.copies == 0)
        #expect((second.loopCPUSeconds ?? 0) >= (first.loopCPUSeconds ?? 0))
        await sender.leave()
        await receiver.leave()
    }

    @Test func onlyTheConnectionsFromTheNamedHostAreStamped() async throws {
        let (relay, sender, receiver) = try await pairSending(5, measuring: ["--measure-kernel", "--measure-only-from", "127.0.0.9"])
        defer { relay.kill() }
        let answer = try #require(reading(relay, answer: 1), "\(relay.lines)")
        #expect(answer.cost.records == 0 && answer.cost.copies == 0, "the pair connected from 127.0.0.1")
        await sender.leave()
        await receiver.leave()
    }

    /// A relay started with `measuring`'s options, and two participants of one session that
    /// have sent `messages` reliable messages from the first to the second, all read.
    private func pairSending(_ messages: Int, measuring: [String]) async throws -> (WatchProcess, any RelayLink, any RelayLink) {
        let relay = try WatchProcess(executable: TandemProcess.executablePath,
                                     arguments: ["serve", "--bind", "127.0.0.1", "--port", "0"] + measuring,
                                     name: "relay", acceptsCommands: true)
        let line = try #require(relay.waitForLine(startingWith: "relay listening on", timeout: 20), "\(relay.standardError)")
        let address = try #require(line.split(separator: " ").first { $0.hasPrefix("127.0.0.1:") }.map(String.init))
        let connector = NetworkRelayConnector(host: "127.0.0.1", port: try SocketAddress(parsing: address).port)
        let recorder = RelayDeliveryRecorder(clock: SystemClock())
        let session = UUID()
        let helper = RelayBenchmark()
        let sender = try await connector.join(helper.request(session, "sender", create: true))
        let receiver = try await connector.join(helper.request(session, "receiver", create: false))
        recorder.follow(receiver)
        for _ in 0..<messages { try sender.send(recorder.body(phase: 40), to: .everyone, reliable: true) }
        #expect(await recorder.wait(for: 40, expected: messages, timeout: .seconds(10)) == messages)
        return (relay, sender, receiver)
    }

    /// Asks for a reading and waits at most 10 s for answer number `answer`.
    private func reading(_ relay: WatchProcess, answer: Int) -> RelayServeStamps.Reading? {
        guard relay.send(RelayServeStamps.command) != nil else { return nil }
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let answers = relay.lines.filter { $0.hasPrefix(RelayServeStamps.prefix) }
            if answers.count >= answer { return RelayServeStamps.reading(answers[answer - 1]) }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return nil
    }
}
