import Foundation
import TandemNet
import TandemNetsim
import Testing

/// The pure schedule: seeded runs with virtual arrival times, no sockets.
@Suite("Impairment schedule")
struct ImpairmentScheduleTests {
    static let millisecond: Int64 = 1_000_000

    @Test("datagram delays stay within delay ± jitter, spread across it, with the asymmetry downstream only")
    func delaysWithinTheDistribution() {
        let impairment = Impairment(delay: 20 * Self.millisecond, jitter: 5 * Self.millisecond, asymmetry: 7 * Self.millisecond)
        var schedule = ImpairmentSchedule(impairment: impairment, seed: 1)
        for direction in PathDirection.allCases {
            let base = direction == .up ? 20 * Self.millisecond : 27 * Self.millisecond
            var delays: [Int64] = []
            for index in 0..<10_000 {
                let arrival = Int64(index) * Self.millisecond
                guard case let .deliver(at: due, heldBack: false) = schedule.onDatagram(direction, at: arrival) else {
                    Issue.record("without loss or reorder every datagram is delivered, not held back")
                    return
                }
                delays.append(due - arrival)
            }
            delays.sort()
            #expect(delays.first! >= base - 5 * Self.millisecond)
            #expect(delays.last! <= base + 5 * Self.millisecond)
            // Uniform: the median near the middle, the extremes near the edges, the quartiles between.
            #expect(abs(delays[5_000] - base) < Self.millisecond / 2)
            #expect(abs(delays[2_500] - (base - 5 * Self.millisecond / 2)) < Self.millisecond / 2)
            #expect(delays.first! < base - 4 * Self.millisecond && delays.last! > base + 4 * Self.millisecond)
        }
    }

    @Test("no impairment: delivered at once, nothing lost or held")
    func noImpairment() {
        var schedule = ImpairmentSchedule(impairment: .none, seed: 9)
        for index in 0..<100 {
            #expect(schedule.onDatagram(.up, at: Int64(index)) == .deliver(at: Int64(index), heldBack: false))
            #expect(schedule.onChunk(stream: 1, .down, at: Int64(index)) == Int64(index))
        }
    }

    @Test("loss rate within statistical bounds", arguments: [0.02, 0.1, 0.5])
    func lossRate(probability: Double) {
        var schedule = ImpairmentSchedule(impairment: Impairment(delay: Self.millisecond, loss: probability), seed: 42)
        let count = 20_000
        var lost = 0
        for index in 0..<count where schedule.onDatagram(index.isMultiple(of: 2) ? .up : .down, at: Int64(index)) == .lose {
            lost += 1
        }
        // Five standard deviations of a binomial count: fails by chance about once in 3.5 million runs.
        let expected = probability * Double(count)
        let deviation = (Double(count) * probability * (1 - probability)).squareRoot()
        #expect(abs(Double(lost) - expected) < 5 * deviation, "lost \(lost) of \(count), expected about \(expected)")
    }

    @Test("reorder: the asked fraction is held back and overtaken by the next datagram")
    func reorderRate() {
        let probability = 0.1
        let impairment = Impairment(delay: 10 * Self.millisecond, reorder: probability, reorderHold: 10 * Self.millisecond)
        var schedule = ImpairmentSchedule(impairment: impairment, seed: 7)
        let count = 10_000
        var deliveries: [(sequence: Int, due: Int64)] = []
        var heldBack = 0
        for sequence in 0..<count {
            // One datagram per millisecond: a datagram held back 10 ms is overtaken by the next nine.
            guard case let .deliver(due, held) = schedule.onDatagram(.up, at: Int64(sequence) * Self.millisecond) else {
                Issue.record("no loss was asked for")
                return
            }
            if held { heldBack += 1 }
            deliveries.append((sequence, due))
        }
        deliveries.sort { $0.due != $1.due ? $0.due < $1.due : $0.sequence < $1.sequence }
        var highest = -1
        var reordered = 0
        for delivery in deliveries {
            if delivery.sequence < highest { reordered += 1 }
            highest = max(highest, delivery.sequence)
        }
        let deviation = (Double(count) * probability * (1 - probability)).squareRoot()
        #expect(abs(Double(heldBack) - probability * Double(count)) < 5 * deviation)
        // Only held-back datagrams arrive late; the last few may have nothing left to overtake them.
        #expect(reordered <= heldBack && reordered >= heldBack - 10)
    }

    @Test("TCP chunks are never reordered nor lost, whatever the jitter, and keep their own delay when spaced out")
    func chunksKeepTheirOrder() {
        let impairment = Impairment(delay: 20 * Self.millisecond, jitter: 20 * Self.millisecond, loss: 1, asymmetry: 3 * Self.millisecond, reorder: 1)
        var schedule = ImpairmentSchedule(impairment: impairment, seed: 3)
        for stream in UInt64(1)...3 {
            for direction in PathDirection.allCases {
                var previous = Int64.min
                for index in 0..<5_000 {
                    // Dense arrivals, 100 µs apart: far closer than the 40 ms spread of the delays.
                    let arrival = Int64(index) * 100_000
                    let due = schedule.onChunk(stream: stream, direction, at: arrival)
                    #expect(due >= previous, "chunk \(index) would overtake the one before it")
                    #expect(due >= arrival + impairment.baseDelay(direction) - impairment.jitter)
                    #expect(due <= arrival + impairment.baseDelay(direction) + impairment.jitter)
                    previous = due
                }
            }
        }
        #expect(schedule.openStreamCount == 3)
        schedule.onStreamClosed(2)
        #expect(schedule.openStreamCount == 2)
        // Spaced out beyond the jitter, each chunk keeps the delay it drew.
        var spaced = ImpairmentSchedule(impairment: Impairment(delay: 20 * Self.millisecond, jitter: 5 * Self.millisecond), seed: 4)
        for index in 0..<1_000 {
            let arrival = Int64(index) * 50 * Self.millisecond
            let delay = spaced.onChunk(stream: 1, .up, at: arrival) - arrival
            #expect((15 * Self.millisecond)...(25 * Self.millisecond) ~= delay)
        }
    }

    @Test("the same seed repeats the same decisions; another seed does not")
    func seeded() {
        let impairment = Impairment(delay: 30 * Self.millisecond, jitter: 10 * Self.millisecond, loss: 0.2, reorder: 0.2)
        func run(_ seed: UInt64) -> [ImpairmentSchedule.DatagramDecision] {
            var schedule = ImpairmentSchedule(impairment: impairment, seed: seed)
            return (0..<500).map { schedule.onDatagram(.down, at: Int64($0) * Self.millisecond) }
        }
        #expect(run(11) == run(11))
        #expect(run(11) != run(12))
    }

    @Test("impossible impairments are named", arguments: [
        (Impairment(delay: 5, jitter: 6), "jitter"),
        (Impairment(delay: -1), "delay"),
        (Impairment(loss: 1.5), "loss"),
        (Impairment(reorder: -0.1), "reorder"),
        (Impairment(asymmetry: -3), "asymmetry"),
    ])
    func problems(impairment: Impairment, word: String) {
        #expect(impairment.problem?.contains(word) == true)
        #expect(Impairment(delay: 50_000_000, jitter: 20_000_000, loss: 0.02, asymmetry: 10_000_000, reorder: 0.01).problem == nil)
    }

    @Test("the description says where the asymmetry goes")
    func description() {
        let text = Impairment(delay: 50_000_000, jitter: 20_000_000, loss: 0.02, asymmetry: 10_000_000).description
        #expect(text.contains("delay 50 ms ± 20 ms"))
        #expect(text.contains("+10 ms downstream (server→client) only"))
        #expect(text.contains("loss 2 %"))
    }

    @Test("the lateness histogram's quantiles and maximum")
    func histogram() {
        var histogram = LatenessHistogram()
        #expect(histogram.quantile(0.5) == nil)
        for microseconds in 1...1_000 { histogram.record(Int64(microseconds) * 1_000 - 500) }
        histogram.record(250_000_000)
        #expect(histogram.count == 1_001)
        #expect(histogram.quantile(0.5) == 501_000)
        #expect(histogram.quantile(0.99) == 991_000)
        #expect(histogram.maximum == 250_000_000)
        #expect(histogram.quantile(1) == 250_000_000)
        histogram.record(-5)
        #expect(histogram.quantile(0) == 1_000)
    }
    @Test("duplication delivers a copy at the rate asked, each copy with a delay of its own")
    func duplicationAtItsRate() {
        let impairment = Impairment(delay: 10 * Self.millisecond, jitter: 5 * Self.millisecond, duplication: 0.2)
        var schedule = ImpairmentSchedule(impairment: impairment, seed: 11)
        var twice = 0
        var copiesDiffer = 0
        for index in 0..<10_000 {
            let arrival = Int64(index) * Self.millisecond
            let decision = schedule.onDatagram(.up, at: arrival)
            if case let .deliverTwice(at: first, heldBack: false, copyAt: copy) = decision {
                twice += 1
                if first != copy { copiesDiffer += 1 }
                #expect(decision.deliveries == [min(first, copy), max(first, copy)])
                #expect(decision.deliveries.allSatisfy { (arrival + 5 * Self.millisecond...arrival + 15 * Self.millisecond).contains($0) })
            }
        }
        #expect(abs(Double(twice) / 10_000 - 0.2) < 0.02)
        #expect(copiesDiffer > twice * 9 / 10)
    }

    @Test("queueing adds an exponential delay with the mean asked, never below the fixed delay")
    func queueingIsExponential() {
        var schedule = ImpairmentSchedule(impairment: Impairment(delay: 20 * Self.millisecond, queueing: 3 * Self.millisecond), seed: 5)
        var extra: [Int64] = []
        for index in 0..<20_000 {
            let due = schedule.onChunk(stream: UInt64(index), .down, at: 0)
            extra.append(due - 20 * Self.millisecond)
        }
        #expect(extra.allSatisfy { $0 >= 0 })
        let mean = Double(extra.reduce(0, +)) / Double(extra.count)
        #expect(abs(mean - 3e6) < 0.1e6)
        // Exponential: the median is the mean × ln 2.
        extra.sort()
        #expect(abs(Double(extra[10_000]) - 3e6 * 0.6931) < 0.15e6)
    }

    @Test("without queueing or duplication the draws are the proxy's as they always were: loss, reorder, delay")
    func drawsRepeatWithoutTheNewFeatures() {
        let impairment = Impairment(delay: 30 * Self.millisecond, jitter: 10 * Self.millisecond, loss: 0.2, reorder: 0.2)
        var schedule = ImpairmentSchedule(impairment: impairment, seed: 77)
        var random = SeededRandom(seed: 77)
        for index in 0..<1_000 {
            let arrival = Int64(index) * Self.millisecond
            let lost = random.unit() < 0.2
            let held = random.unit() < 0.2
            let delay = 20 * Self.millisecond + Int64(random.unit() * Double(20 * Self.millisecond + 1))
            let expected: ImpairmentSchedule.DatagramDecision =
                lost ? .lose : .deliver(at: arrival + delay + (held ? impairment.reorderHold : 0), heldBack: held)
            #expect(schedule.onDatagram(.up, at: arrival) == expected)
        }
    }
    @Test("an impairment written before queueing and duplication existed still decodes, as none of either")
    func olderReportsDecode() throws {
        let old = #"{"delay":50000000,"jitter":20000000,"loss":0.02,"asymmetry":0,"reorder":0,"reorderHold":10000000}"#
        let decoded = try JSONDecoder().decode(Impairment.self, from: Data(old.utf8))
        #expect(decoded == Impairment(delay: 50_000_000, jitter: 20_000_000, loss: 0.02))
        let full = Impairment(delay: 5, jitter: 1, queueing: 3, duplication: 0.5)
        #expect(try JSONDecoder().decode(Impairment.self, from: JSONEncoder().encode(full)) == full)
        #expect(Impairment(delay: 5, duplication: 1.5).problem?.contains("duplication") == true)
        #expect(Impairment(queueing: -1).problem?.contains("queueing") == true)
    }
}
