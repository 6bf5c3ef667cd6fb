import Foundation
import TandemMedia
import Testing

/// The WSOLA time stretcher as a pure value: pitch kept at every rate, rate 1 bit-exact, the
/// media position exact over many calls, clicks heard within the documented bound of their
/// nominal instants, chunking invisible, seeks clean, joins smooth, bad input refused.
@Suite("TimeStretcher")
struct TimeStretcherTests {
    static let sampleRate = 48_000.0

    /// A source addressed by absolute frame: both channels of each frame from `sample`.
    struct Signal {
        let sample: @Sendable (Int64) -> (Int16, Int16)

        func read(_ start: Int64, _ count: Int) -> [Int16] {
            var samples = [Int16]()
            samples.reserveCapacity(count * 2)
            for frame in start..<(start + Int64(count)) {
                let (left, right) = sample(frame)
                samples.append(left)
                samples.append(right)
            }
            return samples
        }

        static func sine(_ frequency: Double, amplitude: Double = 12_000) -> Signal {
            Signal { frame in
                let phase = 2 * Double.pi * frequency * Double(frame) / TimeStretcherTests.sampleRate
                let value = Int16((amplitude * sin(phase)).rounded())
                return (value, value)
            }
        }

        /// Repeatable noise: each frame's samples hashed from its index.
        static let noise = Signal { frame in
            var state = UInt64(bitPattern: frame) &* 0x9E37_79B9_7F4A_7C15
            state ^= state >> 29
            state &*= 0xBF58_476D_1CE4_E5B9
            state ^= state >> 32
            return (Int16(truncatingIfNeeded: state), Int16(truncatingIfNeeded: state >> 16))
        }

        /// Something like music: three tones, one wandering, and a little noise.
        static let music = Signal { frame in
            let time = Double(frame) / TimeStretcherTests.sampleRate
            let tones = 5_000 * sin(2 * .pi * 220 * time) + 3_000 * sin(2 * .pi * 330.5 * time)
                + 2_000 * sin(2 * .pi * (700 + 50 * sin(2 * .pi * 3 * time)) * time)
            let (left, right) = noise.sample(frame)
            return (Int16((tones + Double(left) / 64).rounded()), Int16((tones + Double(right) / 64).rounded()))
        }

        /// Single-frame impulses every `period` frames from `phase`, silence between.
        static func clicks(every period: Int64, phase: Int64, amplitude: Int16 = 20_000) -> Signal {
            Signal { frame in
                let hit = frame >= 0 && (frame - phase) % period == 0
                return hit ? (amplitude, amplitude) : (0, 0)
            }
        }
    }

    /// Renders `total` frames from `position` at `rate` in calls of `chunks` sizes (cycled), each
    /// call at the position the timeline gives (start + rate × frames so far).
    static func render(
        _ stretcher: inout TimeStretcher, _ signal: Signal, from start: Double, rate: Double, total: Int,
        chunks: [Int] = [480], grid: TimeStretcher.Grid? = nil
    ) throws -> [Int16] {
        var output = [Int16]()
        var done = 0
        var call = 0
        while done < total {
            let count = min(chunks[call % chunks.count], total - done)
            let before = output.count
            try stretcher.render(
                frameCount: count, at: start + rate * Double(done), rate: rate, grid: grid, into: &output, source: signal.read)
            #expect(output.count - before == count * 2)
            done += count
            call += 1
        }
        return output
    }

    /// The left channel.
    static func left(_ samples: [Int16]) -> [Double] {
        stride(from: 0, to: samples.count, by: 2).map { Double(samples[$0]) }
    }

    /// The frequency of a tone, from the first and last of its rising zero crossings
    /// (interpolated between frames).
    static func frequency(_ wave: [Double]) -> Double {
        var crossings = [Double]()
        for index in 1..<wave.count where wave[index - 1] < 0 && wave[index] >= 0 {
            crossings.append(Double(index - 1) + -wave[index - 1] / (wave[index] - wave[index - 1]))
        }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 2 else { return 0 }
        return Double(crossings.count - 1) / ((last - first) / sampleRate)
    }

    static func rms(_ wave: [Double]) -> Double {
        (wave.reduce(0) { $0 + $1 * $1 } / Double(wave.count)).squareRoot()
    }

    static let chunkSizes = [96, 480, 2_400, 1, 1_023, 37, 0, 960, 2_399, 250]

    @Test("at rate 1 the output is the source, bit for bit, in any chunks")
    func rateOneIsBitExact() throws {
        var stretcher = TimeStretcher()
        let start: Int64 = 1_000_003
        let output = try Self.render(
            &stretcher, .noise, from: Double(start), rate: 1, total: 150_000, chunks: Self.chunkSizes)
        #expect(output == Signal.noise.read(start, 150_000))
    }

    @Test("at rate 1 from a fractional position the output is the source from the nearest frame")
    func rateOneFractionalPosition() throws {
        var stretcher = TimeStretcher()
        let output = try Self.render(&stretcher, .noise, from: 5_000.3, rate: 1, total: 20_000, chunks: [333])
        #expect(output == Signal.noise.read(5_000, 20_000))
    }

    @Test("near rate 1 the output is the source itself while its place is within the search radius",
          arguments: [1.000_5, 0.999_5])
    func nearRateOneIsTheSource(rate: Double) throws {
        var stretcher = TimeStretcher()
        let start = 300_000.0
        let total = 96_000
        let output = try Self.render(&stretcher, .noise, from: start, rate: rate, total: total, chunks: Self.chunkSizes)
        // The first piece's middle is on the timeline: it starts (rate − 1)·(stride + overlap)/2 off.
        let span = Double(stretcher.strideFrames + stretcher.overlapFrames)
        let first = Int64((start + (rate - 1) * span / 2).rounded())
        #expect(abs(rate - 1) * Double(total) < Double(stretcher.searchFrames))
        #expect(output == Signal.noise.read(first, total))
    }

    @Test("a tone keeps its pitch and level", arguments: [0.25, 0.5, 1.5, 2, 4], [110.0, 440.0, 1_000.0])
    func pitchIsKept(rate: Double, frequency: Double) throws {
        var stretcher = TimeStretcher()
        let output = try Self.render(&stretcher, .sine(frequency), from: 96_000, rate: rate, total: 48_000)
        let wave = Self.left(output)
        let measured = Self.frequency(wave)
        #expect(abs(measured / frequency - 1) < 0.01, "measured \(measured) Hz")
        #expect(abs(Self.rms(wave) / (12_000 / 2.0.squareRoot()) - 1) < 0.05)
    }

    @Test("joins between pieces make no click on a tone, also across changes of rate", arguments: [110.0, 440.0])
    func joinsAreSmooth(frequency: Double) throws {
        var stretcher = TimeStretcher()
        let signal = Signal.sine(frequency)
        var output = [Int16]()
        var position = 48_000.0
        for rate in [1, 0.5, 2, 1, 4, 0.25, 1.5, 1] {
            for _ in 0..<30 {
                try stretcher.render(frameCount: 480, at: position, rate: rate, into: &output, source: signal.read)
                position += rate * 480
            }
        }
        let wave = Self.left(output)
        let steepest = 12_000 * 2 * Double.pi * frequency / Self.sampleRate
        let jump = zip(wave, wave.dropFirst()).map { abs($1 - $0) }.max() ?? 0
        #expect(jump <= 1.25 * steepest, "largest step \(jump) against the tone's \(steepest)")
    }

    @Test("after a change back to rate 1 the output is bit-exact again from the next piece on")
    func backToRateOneIsExact() throws {
        var stretcher = TimeStretcher()
        var output = [Int16]()
        try stretcher.render(frameCount: 10_000, at: 0, rate: 1.5, into: &output, source: Signal.music.read)
        let position = stretcher.position
        #expect(position == 15_000)
        output.removeAll()
        try stretcher.render(frameCount: 20_000, at: position, rate: 1, into: &output, source: Signal.music.read)
        let settled = stretcher.strideFrames + stretcher.overlapFrames
        let expected = Signal.music.read(Int64(position) + Int64(settled), 20_000 - settled)
        #expect(Array(output[(settled * 2)...]) == expected)
    }

    @Test("the media position after many calls is exactly start + rate × frames",
          arguments: [0.25, 0.7, 1, 1.1, 1.5, 3.3, 4])
    func positionNeverDrifts(rate: Double) throws {
        var stretcher = TimeStretcher()
        let start = 123_456.789
        var output = [Int16]()
        var total = 0
        for call in 0..<100 {
            let count = 96 + (call * 977) % 2_305
            let position = start + rate * Double(total)
            #expect(stretcher.position == position || call == 0)
            try stretcher.render(frameCount: count, at: position, rate: rate, into: &output) { _, count in
                [Int16](repeating: 0, count: count * 2)
            }
            total += count
            output.removeAll(keepingCapacity: true)
        }
        #expect(stretcher.position == start + rate * Double(total))
    }

    @Test("a click train's clicks are heard within the bound of their nominal instants",
          arguments: [0.25, 0.5, 1, 2, 4])
    func clicksKeepTheirTiming(rate: Double) throws {
        var stretcher = TimeStretcher()
        let period: Int64 = 4_800
        let phase: Int64 = 1_000
        let start = 24_000.5
        let total = Int(30 * Double(period) / rate)
        let output = try Self.render(
            &stretcher, .clicks(every: period, phase: phase), from: start, rate: rate, total: total, chunks: Self.chunkSizes)
        let bound = stretcher.sourceErrorBound(rate: rate)
        var worst = 0.0
        var lateness = 0.0
        var heard = Set<Int64>()
        for frame in 0..<total where output[frame * 2] != 0 {
            let nominal = start + rate * Double(frame)
            let click = ((nominal - Double(phase)) / Double(period)).rounded()
            let error = abs(nominal - (Double(phase) + click * Double(period)))
            worst = max(worst, error)
            let due = (Double(phase) + click * Double(period) - start) / rate
            lateness = max(lateness, abs(Double(frame) - due) / Self.sampleRate)
            if output[frame * 2] >= 10_000 { heard.insert(Int64(click)) }
        }
        #expect(worst <= bound, "worst \(worst) source frames against \(bound)")
        #expect(lateness <= stretcher.timingBound(rate: rate).seconds + 1e-9, "worst \(lateness) s of output")
        let due = (0..<100).map(Int64.init).filter { index in
            let instant = Double(phase + index * period)
            return instant - bound >= start && instant + bound < start + rate * Double(total - 1)
        }
        let share = Double(due.filter(heard.contains).count) / Double(due.count)
        #expect(due.count >= 25)
        // Below rate 1 the pieces' uncross-faded parts cover the whole source; above it each piece
        // sounds about a stride of source at half gain or more out of every rate × stride.
        #expect(share >= (rate <= 1 ? 1 : 0.75 / rate), "heard \(share) of the clicks")
    }

    @Test("across a change of rate, clicks stay within the documented bound of the change",
          arguments: [(0.5, 2.0), (2.0, 0.5), (4.0, 0.25), (1.0, 3.0)])
    func clicksAcrossARateChange(before: Double, after: Double) throws {
        var stretcher = TimeStretcher()
        let period: Int64 = 4_800
        let clicks = Signal.clicks(every: period, phase: 700)
        let first = Int(8 * Double(period) / before) + 333
        _ = try Self.render(&stretcher, clicks, from: 0, rate: before, total: first, chunks: Self.chunkSizes)
        let change = stretcher.position
        var output = [Int16]()
        let total = Int(8 * Double(period) / after)
        try stretcher.render(frameCount: total, at: change, rate: after, into: &output, source: clicks.read)
        let span = stretcher.strideFrames + stretcher.overlapFrames
        let settling = stretcher.sourceErrorBound(rate: before) + abs(before - after) * Double(span)
        var heard = 0
        for frame in 0..<total where output[frame * 2] != 0 {
            let nominal = change + after * Double(frame)
            let click = ((nominal - 700) / Double(period)).rounded()
            let error = abs(nominal - (700 + click * Double(period)))
            let bound = frame < span ? max(settling, stretcher.sourceErrorBound(rate: after)) : stretcher.sourceErrorBound(rate: after)
            #expect(error <= bound, "frame \(frame): \(error) source frames against \(bound)")
            heard += 1
        }
        #expect(heard > 0)
    }

    @Test("rendering in chunks of any sizes gives the same samples as one call", arguments: [0.5, 1.5, 4])
    func chunkingIsInvisible(rate: Double) throws {
        var whole = TimeStretcher()
        var chunked = TimeStretcher()
        let one = try Self.render(&whole, .music, from: 7_777.25, rate: rate, total: 96_000, chunks: [96_000])
        let many = try Self.render(&chunked, .music, from: 7_777.25, rate: rate, total: 96_000, chunks: Self.chunkSizes)
        #expect(one == many)
    }

    @Test("after a seek nothing of the old place is heard", arguments: [true, false])
    func seekLeavesNoStaleSamples(explicitReset: Bool) throws {
        let toneThenSilence = Signal { frame in frame < 1_000_000 ? Signal.sine(440).sample(frame) : (0, 0) }
        var stretcher = TimeStretcher()
        _ = try Self.render(&stretcher, toneThenSilence, from: 10_000, rate: 1.5, total: 24_011)
        if explicitReset { stretcher.reset() }
        var output = [Int16]()
        try stretcher.render(frameCount: 4_800, at: 2_000_000, rate: 1.5, into: &output, source: toneThenSilence.read)
        #expect(output.allSatisfy { $0 == 0 })
        output.removeAll()
        try stretcher.render(frameCount: 4_800, at: 50_000, rate: 1, into: &output, source: toneThenSilence.read)
        #expect(output == toneThenSilence.read(50_000, 4_800))
    }

    @Test("the source is read only within the documented window", arguments: [0.25, 0.5, 1, 2, 4])
    func readsStayInTheirWindow(rate: Double) throws {
        var stretcher = TimeStretcher()
        let span = Double(stretcher.strideFrames + stretcher.overlapFrames)
        let search = Double(stretcher.searchFrames)
        var total = 0
        var output = [Int16]()
        for call in 0..<100 {
            let count = Self.chunkSizes[call % Self.chunkSizes.count]
            let position = 500_000 + rate * Double(total)
            let lowest = position - search - 1 - max(0, 1 - rate) * span / 2
            let highest = position + rate * Double(max(count - 1, 0)) + search + 1 + (1 + rate) * span / 2
            try stretcher.render(frameCount: count, at: position, rate: rate, into: &output) { first, frames in
                #expect(Double(first) >= lowest)
                #expect(Double(first) + Double(frames - 1) <= highest)
                return Signal.music.read(first, frames)
            }
            total += count
        }
    }

    @Test("bad input is refused with one clear line, and playing goes on as if it had not come")
    func badInputIsRefused() throws {
        var stretcher = TimeStretcher()
        var reference = TimeStretcher()
        var output = [Int16]()
        var expected = [Int16]()
        try stretcher.render(frameCount: 1_000, at: 0, rate: 2, into: &output, source: Signal.music.read)
        try reference.render(frameCount: 1_000, at: 0, rate: 2, into: &expected, source: Signal.music.read)
        let refused: [(TimeStretchError, Int, Double, Double)] = [
            (.rateOutOfRange(0), 10, 2_000, 0.1), (.rateOutOfRange(0), 10, 2_000, 5),
            (.rateOutOfRange(0), 10, 2_000, .nan), (.rateOutOfRange(0), 10, 2_000, -1),
            (.positionOutOfRange(0), 10, .nan, 2), (.positionOutOfRange(0), 10, .infinity, 2),
            (.positionOutOfRange(0), 10, 1e300, 2), (.negativeFrameCount(0), -1, 2_000, 2),
        ]
        for (error, count, position, rate) in refused {
            #expect(throws: error) {
                try stretcher.render(frameCount: count, at: position, rate: rate, into: &output, source: Signal.music.read)
            }
        }
        #expect(TimeStretchError.rateOutOfRange(5).description == "time stretch rate 5.0 is outside 0.25...4.0")
        try stretcher.render(frameCount: 5_000, at: 2_000, rate: 2, into: &output, source: Signal.music.read)
        try reference.render(frameCount: 5_000, at: 2_000, rate: 2, into: &expected, source: Signal.music.read)
        #expect(output == expected)

        var configuration = TimeStretcher.Configuration.standard
        configuration.overlap = .zero
        #expect(throws: TimeStretchError.invalidConfiguration("")) { try TimeStretcher(configuration: configuration) }
        configuration.overlap = .milliseconds(50)
        #expect(throws: TimeStretchError.invalidConfiguration("")) { try TimeStretcher(configuration: configuration) }
        configuration = .standard
        configuration.channels = 0
        #expect(throws: TimeStretchError.invalidConfiguration("")) { try TimeStretcher(configuration: configuration) }
        configuration = .standard
        configuration.searchRadius = .milliseconds(-1)
        #expect(throws: TimeStretchError.invalidConfiguration("")) { try TimeStretcher(configuration: configuration) }
        #expect(try TimeStretcher(configuration: .standard).strideFrames == 1_920)
    }

    @Test("a mono stretcher at 44.1 kHz keeps a tone's pitch and is exact at rate 1")
    func monoAtAnotherSampleRate() throws {
        var configuration = TimeStretcher.Configuration.standard
        configuration.channels = 1
        configuration.sampleRate = 44_100
        var stretcher = try TimeStretcher(configuration: configuration)
        #expect(stretcher.strideFrames == 1_764 && stretcher.overlapFrames == 353 && stretcher.searchFrames == 331)
        let tone: (Int64, Int) -> [Int16] = { start, count in
            (start..<(start + Int64(count))).map { Int16((9_000 * sin(2 * Double.pi * 440 * Double($0) / 44_100)).rounded()) }
        }
        var output = [Int16]()
        try stretcher.render(frameCount: 44_100, at: 1_000, rate: 2, into: &output, source: tone)
        #expect(output.count == 44_100)
        let measured = Self.frequency(output.map(Double.init)) * 44_100 / Self.sampleRate
        #expect(abs(measured / 440 - 1) < 0.01, "measured \(measured) Hz")
        stretcher.reset()
        output.removeAll()
        try stretcher.render(frameCount: 10_000, at: 5_000, rate: 1, into: &output, source: tone)
        #expect(output == tone(5_000, 10_000))
    }

    @Test("a short answer from the source is completed with silence")
    func shortSourceAnswers() throws {
        var stretcher = TimeStretcher()
        var output = [Int16]()
        try stretcher.render(frameCount: 3_000, at: 0, rate: 1, into: &output) { _, count in
            [Int16](repeating: 7, count: count)
        }
        #expect(output.count == 6_000)
        #expect(output[0] == 7 && output[2_303] == 7 && output[2_304] == 0 && output[3_840] == 7)
    }

    /// The nominal media positions (start + rate × output frame) at which clicks louder than any
    /// music in `output` begin.
    static func clickPositions(_ output: [Int16], start: Double, rate: Double) -> [Double] {
        var positions: [Double] = []
        var last = -1_000
        for (frame, sample) in left(output).enumerated() where abs(sample) >= 24_000 {
            if frame - last > 96 { positions.append(start + rate * Double(frame)) }
            last = frame
        }
        return positions
    }

    /// Music with a click every 4,801 frames, loud enough to be found over it.
    static let musicWithClicks = Signal { frame in
        let (left, right) = Signal.music.sample(frame)
        guard frame % 4_801 == 123 else { return (left, right) }
        return (left > 0 ? 30_000 : -30_000, right > 0 ? 30_000 : -30_000)
    }

    @Test("stretchers on one grid play the same pieces, whenever they start and however their clocks drift",
          arguments: [0.75, 1.5, 2])
    func aGridMakesParticipantsPlayAlike(rate: Double) throws {
        let signal = Self.musicWithClicks
        let grid = TimeStretcher.Grid(origin: 50_000, rate: rate)
        // One participant from the grid's origin, its clock 150 ppm fast, in calls of 480 frames;
        // another 0.3 s later, its clock 120 ppm slow, in calls of assorted sizes (a late voice:
        // it replays the pieces before its place).
        var early = TimeStretcher(), late = TimeStretcher()
        let earlyRate = rate * (1 + 150e-6), lateRate = rate * (1 - 120e-6)
        let lateStart = 50_000 + rate * 14_400.37
        let first = try Self.render(&early, signal, from: 50_000, rate: earlyRate, total: 144_000, grid: grid)
        let second = try Self.render(&late, signal, from: lateStart, rate: lateRate, total: 96_000,
                                     chunks: Self.chunkSizes.filter { $0 > 0 }, grid: grid)
        // Where both play, away from the ends.
        let both = (lateStart + 6_000)...(lateStart + lateRate * 96_000 - 6_000)
        let heardEarly = Self.clickPositions(first, start: 50_000, rate: earlyRate).filter(both.contains)
        let heardLate = Self.clickPositions(second, start: lateStart, rate: lateRate).filter(both.contains)
        #expect(heardEarly.count > 10)
        // Every click each heard, the other heard at the same nominal position within 2.5 frames:
        // each cuts on its own output frames (a frame's rounding), and the clocks' 270 ppm
        // apart move a click up to a frame across a piece.
        for position in heardEarly {
            #expect(heardLate.contains { abs($0 - position) <= 2.5 }, "a click at \(position) heard early only")
        }
        for position in heardLate {
            #expect(heardEarly.contains { abs($0 - position) <= 2.5 }, "a click at \(position) heard late only")
        }
    }

    @Test("a stretcher whose grid changes plays the new grid's pieces from its next cut on")
    func aNewGridIsFollowedFromItsNextCut() throws {
        let rate = 1.5
        let before = TimeStretcher.Grid(origin: 49_223, rate: rate), after = TimeStretcher.Grid(origin: 50_000, rate: rate)
        // One stretcher on the first grid for half a second, then on the second; another on the
        // second throughout.
        var moved = TimeStretcher(), steady = TimeStretcher()
        let change = 50_000 + rate * 24_000
        let first = try Self.render(&moved, Self.musicWithClicks, from: 50_000, rate: rate, total: 24_000, grid: before)
        let then = try Self.render(&moved, Self.musicWithClicks, from: change, rate: rate, total: 96_000, grid: after)
        let throughout = try Self.render(&steady, Self.musicWithClicks, from: 50_000, rate: rate, total: 120_000, grid: after)
        #expect(first.count == 48_000)
        // Past the second grid's next cut and its cross-fade.
        let compared = (change + rate * 2_400)...(change + rate * 90_000)
        let heardMoved = Self.clickPositions(then, start: change, rate: rate).filter(compared.contains)
        let heardSteady = Self.clickPositions(throughout, start: 50_000, rate: rate).filter(compared.contains)
        #expect(heardSteady.count > 10)
        #expect(heardMoved.count == heardSteady.count)
        for position in heardSteady {
            #expect(heardMoved.contains { abs($0 - position) <= 1 }, "a click at \(position) heard on the second grid only")
        }
    }
}
