import Testing
@testable import TandemMedia
import TandemClock

/// The decoded sound the output reads: addressed by media frame, by generation, bounded.
@Suite struct AudioFrameStoreTests {
    /// A chunk of `frames` frames from media frame `start` whose left samples count up from `start`.
    /// Stamped at `stamp` (ns), by default exactly at its first frame's instant.
    static func chunk(from start: Int, frames: Int, stamp: Int64? = nil) -> AudioChunk {
        let samples = (0..<frames).flatMap { [Int16(truncatingIfNeeded: start + $0), Int16(-1)] }
        return AudioChunk(presentationTime: stamp ?? Int64(start) * 1_000_000_000 / 48_000, samples: samples)
    }

    @Test func readsAcrossChunksAndLeavesSilenceWhereNothingIsDecoded() {
        let store = AudioFrameStore()
        store.append(Self.chunk(from: 0, frames: 480), key: .generation(0), item: "a")
        store.append(Self.chunk(from: 480, frames: 480), key: .generation(0), item: "a")
        var buffer: [Float] = []
        let found = store.read(generation: 0, from: 470, count: 600, into: &buffer)
        #expect(found == 490)
        #expect(buffer[0] == Float(470) / 32768 && buffer[20] == Float(480) / 32768)
        #expect(buffer[2 * 489] == Float(959) / 32768)
        #expect(buffer[2 * 490] == 0 && buffer[2 * 599] == 0)
        // Another generation's frames are not this one's.
        #expect(store.read(generation: 1, from: 0, count: 10, into: &buffer) == 0)
        #expect(store.item(generation: 0) == "a")
    }

    @Test func aPreparedItemsSoundBelongsToTheGenerationItsSwitchGets() {
        let store = AudioFrameStore()
        store.append(Self.chunk(from: 0, frames: 480), key: .prepared(3), item: "next")
        var buffer: [Float] = []
        #expect(store.read(generation: 2, from: 0, count: 480, into: &buffer) == 0)
        store.assign(prepared: 3, to: 2)
        #expect(store.read(generation: 2, from: 0, count: 480, into: &buffer) == 480)
        #expect(store.item(generation: 2) == "next")
        // A later preparation that no switch claimed replaces an unclaimed one.
        store.append(Self.chunk(from: 0, frames: 480), key: .prepared(4), item: "other")
        store.append(Self.chunk(from: 0, frames: 480), key: .prepared(5), item: "third")
        #expect(store.storedFrames == 960)
    }

    @Test func keepsOnlyWhatTheOutputMayStillRead() {
        let store = AudioFrameStore()
        for index in 0..<200 { store.append(Self.chunk(from: index * 480, frames: 480), key: .generation(0), item: "a") }
        store.append(Self.chunk(from: 0, frames: 480), key: .generation(1), item: "a")
        // Playing generation 1 at frame 96 000 of generation 0 is gone, and so is 0's past beyond 1 s.
        store.retain(generations: [0, 1], positions: [0: 96_000])
        #expect(store.storedFrames == (200 * 480 - 96_000 + 48_000) + 480)
        store.retain(generations: [1], positions: [1: 0])
        #expect(store.storedFrames == 480)
    }

    /// The output only notes what it reads (a few numbers, on its real-time thread); the
    /// decoder's next append lets go of what the note no longer needs, a bounded number of chunks
    /// at a time.
    @Test func whatTheOutputNotesItReadsIsLetGoAtTheNextAppend() {
        let store = AudioFrameStore()
        for index in 0..<200 { store.append(Self.chunk(from: index * 480, frames: 480), key: .generation(0), item: "a") }
        var reading = AudioFrameStore.Reading()
        reading.add(0, position: 96_000 - 48_000 + 480 * 10)
        store.note(reading)
        #expect(store.storedFrames == 200 * 480, "noting frees nothing")
        store.append(Self.chunk(from: 200 * 480, frames: 480), key: .generation(0), item: "a")
        #expect(store.storedFrames == 201 * 480 - 480 * 10, "the ten chunks more than 1 s behind, at the next append")
        // A newer generation read alone: the older one goes, whole, at the next append.
        var next = AudioFrameStore.Reading()
        next.add(1, position: 0)
        store.note(next)
        store.append(Self.chunk(from: 0, frames: 480), key: .generation(1), item: "a")
        #expect(store.storedFrames == 480)
        var buffer: [Float] = []
        #expect(store.read(generation: 1, from: 0, count: 480, into: &buffer) == 480)
    }

    /// A reading holds a fixed number of generations; past that it lets no generation go.
    @Test func aReadingBeyondItsCapacityLetsNoGenerationGo() {
        var reading = AudioFrameStore.Reading()
        for generation in 0..<AudioFrameStore.Reading.capacity { reading.add(generation) }
        reading.add(3, position: 5)
        #expect(!reading.overflowed && reading.position(3) == 5 && reading.newest == AudioFrameStore.Reading.capacity - 1)
        reading.add(100)
        #expect(reading.overflowed && !reading.contains(100))
        let store = AudioFrameStore()
        store.append(Self.chunk(from: 0, frames: 480), key: .generation(50), item: "a")
        store.retain(reading)
        #expect(store.storedFrames == 480)
    }

    /// 1,024-frame chunks from packet `first` on, stamped as Matroska stamps them (to the
    /// millisecond: 0, 21, 43, 64 ms for 0, 21.33, 42.67, 64).
    static func matroskaChunks(from first: Int, count: Int) -> [AudioChunk] {
        (first..<(first + count)).map { packet in
            let milliseconds = (Double(packet * 1024) / 48).rounded()
            return chunk(from: packet * 1024, frames: 1024, stamp: Int64(milliseconds) * 1_000_000)
        }
    }

    @Test func chunksStampedToTheMillisecondPlayContiguouslyWhereTheDecoderPutThem() {
        // Two participants whose decoding starts at different packets find the same places.
        for first in [0, 1, 2] {
            let store = AudioFrameStore()
            for chunk in Self.matroskaChunks(from: first, count: 12) { store.append(chunk, key: .generation(0), item: "a") }
            var buffer: [Float] = []
            let start = first * 1024
            #expect(store.read(generation: 0, from: Int64(start), count: 8192, into: &buffer) == 8192)
            // The left samples count up from the packet's true frame, without a gap or a repeat.
            #expect((0..<8192).allSatisfy { buffer[2 * $0] == Float(Int16(truncatingIfNeeded: start + $0)) / 32768 },
                    "decoding from packet \(first)")
        }
    }

    @Test func aStampFurtherThanTheContinuityIsARealGap() {
        let store = AudioFrameStore()
        store.append(Self.chunk(from: 0, frames: 480), key: .generation(0), item: "a")
        // Stamped 3 ms after the first chunk's end (beyond the 2 ms continuity): placed at its stamp.
        store.append(Self.chunk(from: 480 + 144, frames: 480), key: .generation(0), item: "a")
        var buffer: [Float] = []
        #expect(store.read(generation: 0, from: 0, count: 480, into: &buffer) == 480)
        #expect(store.read(generation: 0, from: 480, count: 144, into: &buffer) == 0)
        #expect(store.read(generation: 0, from: 624, count: 1, into: &buffer) == 1 && buffer[0] == Float(624) / 32768)
    }

    /// How far the sound is decoded from a frame on: to the end of what follows it without a
    /// gap, in the generation asked about (or a preparation assigned to it), nil where nothing is.
    @Test func decodedEndIsWhereTheSoundFromAFrameStops() {
        let store = AudioFrameStore()
        store.append(Self.chunk(from: 0, frames: 480), key: .generation(0), item: "a")
        store.append(Self.chunk(from: 480, frames: 480), key: .generation(0), item: "a")
        store.append(Self.chunk(from: 960 + 144, frames: 480), key: .generation(0), item: "a")
        #expect(store.decodedEnd(generation: 0, from: 100) == 960)
        #expect(store.decodedEnd(generation: 0, from: 1_000) == nil)
        let afterTheGap = store.decodedEnd(generation: 0, from: 1_200)
        #expect(afterTheGap == Int64(960 + 144 + 480))
        #expect(store.decodedEnd(generation: 1, from: 100) == nil)
        store.append(Self.chunk(from: 0, frames: 240), key: .prepared(3), item: "b")
        store.assign(prepared: 3, to: 2)
        #expect(store.decodedEnd(generation: 2, from: 0) == 240)
    }

    @Test func aSegmentsPlaceIsKeptOnceRefined() {
        // Exact stamps for 250 ms, then one 1.5 ms late (within the continuity): it follows the
        // sound before it, and moves nothing already placed.
        let store = AudioFrameStore()
        for index in 0..<26 { store.append(Self.chunk(from: index * 480, frames: 480), key: .generation(0), item: "a") }
        store.append(Self.chunk(from: 26 * 480, frames: 480, stamp: Int64(26 * 480 + 72) * 1_000_000_000 / 48_000),
                     key: .generation(0), item: "a")
        var buffer: [Float] = []
        #expect(store.read(generation: 0, from: 0, count: 27 * 480, into: &buffer) == 27 * 480)
        #expect((0..<(27 * 480)).allSatisfy { buffer[2 * $0] == Float(Int16(truncatingIfNeeded: $0)) / 32768 })
    }
}
