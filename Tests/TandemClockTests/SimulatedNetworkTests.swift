import TandemNet
import Testing
import TandemHarness

/// The simulated network on the shared impairment model: determinism by seed, loss,
/// duplication and reordering at their rates, and delays within the model's bounds.
@Suite struct SimulatedNetworkTests {
    static func deliveries(seed: UInt64, impairment: Impairment, count: Int = 1_000) -> [(time: Int64, payload: Int)] {
        var network = SimulatedNetwork<Int>(impairment: impairment, seed: seed)
        for index in 0..<count { network.send(index, .up, at: Int64(index) * 1_000_000) }
        var arrived: [(Int64, Int)] = []
        while let delivery = network.deliver(notAfter: .max) { arrived.append((delivery.time, delivery.payload)) }
        return arrived
    }

    @Test func sameSeedSameDeliveries() {
        let impairment = Impairment(delay: 15_500_000, jitter: 14_500_000, loss: 0.1, duplication: 0.1)
        let first = Self.deliveries(seed: 7, impairment: impairment)
        let second = Self.deliveries(seed: 7, impairment: impairment)
        let other = Self.deliveries(seed: 8, impairment: impairment)
        #expect(first.map(\.time) == second.map(\.time))
        #expect(first.map(\.payload) == second.map(\.payload))
        #expect(first.map(\.time) != other.map(\.time))
    }

    @Test func lossDuplicationAndReorderingHappenAtTheirRates() {
        let impairment = Impairment(delay: 5_000_000, loss: 0.2, reorder: 0.1, reorderHold: 3_000_000, duplication: 0.05)
        var network = SimulatedNetwork<Int>(impairment: impairment, seed: 1)
        for index in 0..<10_000 { network.send(index, .up, at: Int64(index) * 1_000_000) }
        var arrived: [(time: Int64, payload: Int)] = []
        while let delivery = network.deliver(notAfter: .max) { arrived.append((delivery.time, delivery.payload)) }
        let distinct = Set(arrived.map(\.payload)).count
        #expect(abs(Double(distinct) / 10_000 - 0.8) < 0.02)
        #expect(abs(Double(arrived.count - distinct) / Double(distinct) - 0.05) < 0.01)
        #expect(network.statistics.lost == 10_000 - distinct)
        #expect(network.statistics.duplicated == arrived.count - distinct)
        let overtaken = zip(arrived, arrived.dropFirst()).filter { $0.1.payload < $0.0.payload }.count
        #expect(overtaken > 500)
        #expect(arrived.map(\.time) == arrived.map(\.time).sorted())
    }

    @Test(arguments: [Impairment(delay: 3), Impairment(delay: 15, jitter: 5), Impairment(delay: 100, queueing: 50),
                      Impairment(delay: 40, jitter: 10, asymmetry: 20, queueing: 5)])
    func delaysNeverFallBelowTheModelsFloor(impairment: Impairment) {
        var network = SimulatedNetwork<Int>(impairment: impairment, seed: 99)
        for direction in PathDirection.allCases {
            for index in 0..<5_000 { network.send(index, direction, at: 1_000) }
        }
        var count = 0
        while let delivery = network.deliver(notAfter: .max) {
            count += 1
            #expect(delivery.time - 1_000 >= impairment.minimumDelay(delivery.direction))
            if impairment.queueing == 0 {
                #expect(delivery.time - 1_000 <= impairment.baseDelay(delivery.direction) + impairment.jitter)
            }
        }
        #expect(count == 10_000)
    }
}
