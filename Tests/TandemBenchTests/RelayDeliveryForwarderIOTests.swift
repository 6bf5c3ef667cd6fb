import Testing
import TandemClock
import TandemNet
@testable import TandemBench

/// The bare forwarder beside the relay, on real loopback sockets, small: every frame forwarded,
/// every copy read and stamped, its CPU counted, in both shapes the bench uses.
@Suite struct RelayDeliveryForwarderIOTests {
    @Test(arguments: [(senders: 1, recipients: 4), (senders: 3, recipients: 1)])
    func everyCopyIsReadAndStamped(shape: (senders: Int, recipients: Int)) async throws {
        let forwarder = RelayDeliveryForwarder(senders: shape.senders, recipientsPerSender: shape.recipients, phase: 30, priority: .normal)
        let messages = 6
        let outcome = try await forwarder.run(messages: messages, interval: 2_000_000, timeout: 2_000_000_000)
        #expect(outcome.clients.latencies.count == messages * shape.recipients)
        // A read may bring two frames at once under load: a record is a read.
        #expect(outcome.forwarded >= 1 && outcome.forwarded <= messages)
        #expect(outcome.ledger.copies == outcome.forwarded * shape.recipients)
        let sent = outcome.ledger.delays(to: .sent)
        #expect(sent.unmatched == 0)
        #expect(sent.perSend.count == outcome.ledger.copies)
        #expect(sent.perSend.allSatisfy { $0 >= .zero })
        #expect(sent.lastSend.count == outcome.forwarded)
        #expect(outcome.cpuTime > .zero)
        let cost = RelayBenchmarkReport.KernelCost(outcome)
        #expect(cost.delivered == messages * shape.recipients)
        #expect(cost.cpuMicrosecondsPerDelivery.map { $0 > 0 } == true)
    }
}
