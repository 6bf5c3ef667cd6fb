import Testing
import TandemNet
@testable import TandemMedia
import TandemClock
import TandemMediaTypes

/// The fit of "frame → instant it reaches the output" over synthetic timing reports.
@Suite struct OutputTimingModelTests {
    /// A report every 100 ms of an output whose clock runs `ppm` against the monotonic one,
    /// frame 0 reaching the output at 5 s, with jitter from `noise(index)` in ns.
    static func reports(count: Int, ppm: Double, noise: (Int) -> Int64) -> [OutputTimingModel.Report] {
        let period = OutputTimingModel.nominalPeriod * (1 + ppm / 1e6)
        return (0..<count).map { index in
            let frame = Int64(index * 4800)
            let instant = 5_000_000_000 + Int64((Double(frame) * period).rounded()) + noise(index)
            return .init(frame: frame, instant: LocalInstant(nanoseconds: instant))
        }
    }

    /// A repeatable jitter of ±`amplitude` ns.
    static func jitter(_ index: Int, amplitude: Int64) -> Int64 {
        Int64((index &* 2_654_435_761) % 2001 - 1000) * amplitude / 1000
    }

    @Test func fitsTheLineAlongTheFloorOfLateReports() throws {
        var model = OutputTimingModel()
        // Each report exact or up to 40 µs late, never early.
        for report in Self.reports(count: 60, ppm: 80, noise: { abs(Self.jitter($0, amplitude: 40_000)) }) { model.add(report) }
        // 6 s on: where frame 288 000 (+ 10 ms ahead) reaches the output, within a few µs.
        let frame: Int64 = 288_000 + 480
        let truth = 5_000_000_000 + Double(frame) * OutputTimingModel.nominalPeriod * (1 + 80e-6)
        let fitted = try #require(model.instant(ofFrame: frame))
        #expect(abs(Double(fitted.nanoseconds) - truth) < 4_000, "\(Double(fitted.nanoseconds) - truth) ns off")
        #expect(abs(model.framePeriod / OutputTimingModel.nominalPeriod - 1 - 80e-6) < 5e-6)
    }

    /// Reports every 50 ms, as the output asks for them: a fifth exact, the rest 5 to 85 µs late,
    /// the late ones 20 µs later every other second, so that the reports' median moves by 20 µs
    /// from second to second. The line stays on the exact ones: nearly always within a few µs,
    /// never as far as the median moves (a line through the middle follows it).
    @Test func aWanderingShareOfLateReportsLeavesTheLineOnTheFloor() throws {
        var model = OutputTimingModel()
        var errors: [Double] = []
        var generator = SeededRandom(seed: 3)
        for index in 0..<400 {
            let frame = Int64(index * 2400)
            let truth = 5_000_000_000 + Int64((Double(frame) * OutputTimingModel.nominalPeriod).rounded())
            let shift: Int64 = (index / 20) % 2 == 0 ? 0 : 20_000
            let late: Int64 = generator.next() % 5 == 0 ? 0 : 5_000 + shift + Int64(generator.next() % 80_000)
            model.add(.init(frame: frame, instant: LocalInstant(nanoseconds: truth + late)))
            guard index >= 64 else { continue }
            // Where the frame 45 ms ahead reaches the output.
            let ahead = frame + 2_160
            let expected = 5_000_000_000 + Double(ahead) * OutputTimingModel.nominalPeriod
            let fitted = try #require(model.instant(ofFrame: ahead))
            errors.append(abs(Double(fitted.nanoseconds) - expected))
        }
        let sorted = errors.sorted()
        let p95 = sorted[sorted.count * 95 / 100], worst = sorted[sorted.count - 1]
        #expect(p95 < 6_000 && worst < 15_000, "off the floor: p95 \(p95) ns, at most \(worst) ns")
    }

    /// One report early by 30 µs among exact and late ones is not taken for the floor.
    @Test func anOddEarlyReportIsNotTheFloor() throws {
        var model = OutputTimingModel()
        var generator = SeededRandom(seed: 5)
        for index in 0..<64 {
            let frame = Int64(index * 2400)
            let truth = 5_000_000_000 + Int64((Double(frame) * OutputTimingModel.nominalPeriod).rounded())
            let late: Int64 = index == 40 ? -30_000 : generator.next() % 3 == 0 ? 0 : Int64(generator.next() % 60_000)
            model.add(.init(frame: frame, instant: LocalInstant(nanoseconds: truth + late)))
        }
        let ahead = Int64(63 * 2400 + 2_160)
        let fitted = try #require(model.instant(ofFrame: ahead))
        let expected = 5_000_000_000 + Double(ahead) * OutputTimingModel.nominalPeriod
        #expect(abs(Double(fitted.nanoseconds) - expected) < 4_000, "\(Double(fitted.nanoseconds) - expected) ns off")
    }

    @Test func outliersDoNotMoveIt() throws {
        var clean = OutputTimingModel(), spoiled = OutputTimingModel()
        let reports = Self.reports(count: 40, ppm: 0, noise: { Self.jitter($0, amplitude: 5_000) })
        for (index, report) in reports.enumerated() {
            clean.add(report)
            var late = report
            // Every seventh report 1.5 ms late (a report delayed in the server, say).
            if index % 7 == 3 { late.instant = late.instant + .microseconds(1_500) }
            spoiled.add(late)
        }
        let frame: Int64 = 200_000
        let a = try #require(clean.instant(ofFrame: frame)), b = try #require(spoiled.instant(ofFrame: frame))
        #expect(abs((a - b).nanoseconds) < 5_000)
    }

    @Test func beforeAnyReportThereIsNoInstantAndEarlyReportsUseTheNominalPeriod() throws {
        var model = OutputTimingModel()
        #expect(model.instant(ofFrame: 0) == nil)
        model.add(.init(frame: 4800, instant: LocalInstant(nanoseconds: 1_000_000_000)))
        let instant = try #require(model.instant(ofFrame: 9600))
        #expect(instant.nanoseconds == 1_100_000_000)
    }

    @Test func aJumpOfTheLineStartsItAgain() throws {
        var model = OutputTimingModel()
        let before = Self.reports(count: 30, ppm: 0, noise: { _ in 0 })
        for report in before { model.add(report) }
        // After an underrun, the same frames reach the output 40 ms later.
        for index in 30..<36 {
            let frame = Int64(index * 4800)
            model.add(.init(frame: frame, instant: LocalInstant(nanoseconds: 5_040_000_000 + frame * 1_000_000_000 / 48_000)))
        }
        let instant = try #require(model.instant(ofFrame: 36 * 4800))
        #expect(abs(instant.nanoseconds - (5_040_000_000 + 36 * 4800 * 1_000_000_000 / 48_000)) < 20_000)
    }

    /// Reports every 50 ms for 60 s, a fifth exact and the rest 5 to 85 µs late, but in
    /// stretches of 2 to 4 s (a busy machine's) every report 5 to 45 µs late. The line keeps
    /// near the exact ones: a line fitted to a floor that the newest reports are not part of
    /// tilts off them, and its error at the frames being written grows for as long as the
    /// floor it kept stays in the window.
    @Test func stretchesOfLateReportsDoNotTiltTheLineOffTheNewest() throws {
        var worst = 0.0
        for seed in 1...6 {
            var model = OutputTimingModel()
            var generator = SeededRandom(seed: UInt64(seed) * 7)
            var busyUntil = -1
            for index in 0..<1_200 {
                let frame = Int64(index * 2400)
                let truth = 5_000_000_000 + Int64((Double(frame) * OutputTimingModel.nominalPeriod).rounded())
                if index > busyUntil && generator.next() % 60 == 0 { busyUntil = index + 40 + Int(generator.next() % 40) }
                let busy = index <= busyUntil
                let exact = !busy && generator.next() % 5 == 0
                let late: Int64 = exact ? 0 : 5_000 + Int64(generator.next() % (busy ? 40_000 : 80_000))
                model.add(.init(frame: frame, instant: LocalInstant(nanoseconds: truth + late)))
                guard index >= 64 else { continue }
                let ahead = frame + 2_160
                let expected = 5_000_000_000 + Double(ahead) * OutputTimingModel.nominalPeriod
                let fitted = try #require(model.instant(ofFrame: ahead))
                worst = max(worst, abs(Double(fitted.nanoseconds) - expected))
            }
        }
        // A line that may tilt off the newest reports came 21 µs off here.
        #expect(worst < 19_000, "at most \(worst) ns off")
    }
}
