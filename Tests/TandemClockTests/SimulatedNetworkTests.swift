import Testing
import TandemTestKit

@Suite struct SimulatedNetworkTests {
    static func deliveries(seed: UInt64, profile: LinkProfile, count: Int = 1_000) -> [(time: Int64, payload: Int)] {
        var network = SimulatedNetwork<Int>(upstream: profile, downstream: profile, seed: seed)
        for index in 0..<count { network.send(index, .upstream, at: Int64(index) * 1_000_000) }
        var arrived: [(Int64, Int)] = []
        while let delivery = network.deliver(notAfter: .max) { arrived.append((delivery.time, delivery.payload)) }
        return arrived
    }

    @Test func sameSeedSameDeliveries() {
        let profile = LinkProfile(delay: .uniform(1_000_000, 30_000_000), lossProbability: 0.1, duplicationProbability: 0.1)
        let first = Self.deliveries(seed: 7, profile: profile)
        let second = Self.deliveries(seed: 7, profile: profile)
        let other = Self.deliveries(seed: 8, profile: profile)
        #expect(first.map(\.time) == second.map(\.time))
        #expect(first.map(\.payload) == second.map(\.payload))
        #expect(first.map(\.time) != other.map(\.time))
    }

    @Test func lossDuplicationAndReorderingHappenAtTheirRates() {
        let profile = LinkProfile(delay: .constant(5_000_000), lossProbability: 0.2, duplicationProbability: 0.05,
                                  reorderProbability: 0.1, reorderDelay: 3_000_000)
        let arrived = Self.deliveries(seed: 1, profile: profile, count: 10_000)
        let distinct = Set(arrived.map(\.payload)).count
        #expect(abs(Double(distinct) / 10_000 - 0.8) < 0.02)
        #expect(abs(Double(arrived.count - distinct) / Double(distinct) - 0.05) < 0.01)
        let overtaken = zip(arrived, arrived.dropFirst()).filter { $0.1.payload < $0.0.payload }.count
        #expect(overtaken > 500)
        #expect(arrived.map(\.time) == arrived.map(\.time).sorted())
    }

    @Test(arguments: [DelayDistribution.constant(3), .uniform(10, 20), .floorPlusExponential(floor: 100, mean: 50)])
    func delaysNeverFallBelowTheFloor(distribution: DelayDistribution) {
        var random = SeededRandom(seed: 99)
        for _ in 0..<10_000 {
            #expect(distribution.sample(using: &random) >= distribution.minimum)
        }
    }
}
