import Foundation
import TandemClock

/// Time-stretches interleaved 16-bit PCM to a playback rate without changing its pitch, by
/// waveform-similarity overlap-add (WSOLA), while the media position of its output stays on the
/// timeline: it never drifts, whatever the rate, the number of calls or their sizes.
///
/// **Use.** A pull-model output asks, each callback, for `frameCount` output frames whose first
/// frame plays at media position `position` (in source frames, fractional) at `rate`:
/// `render(frameCount:at:rate:into:source:)`. The stretcher reads the source by absolute media
/// frame through the `source` closure (zeros where there is none) and appends exactly
/// `frameCount` frames. When a call continues the previous one (`position` is the stretcher's
/// own `position`, the rate unchanged), the output continues seamlessly; calling in chunks of any
/// sizes gives the same samples as one call.
///
/// **How it plays.** The output is cut into segments of `stride` frames. Each plays a piece of
/// `stride + overlap` source frames at their own speed, so the pitch is the source's; the first
/// `overlap` frames of a piece are cross-faded (raised cosine, gains summing to 1) with the
/// `overlap` source frames that follow the previous piece. Where a piece starts is its nominal
/// start moved by at most `searchRadius` to where the two waveforms agree best (normalised
/// cross-correlation of the channels' sum over the overlap). A piece that the source continues
/// from the previous one (the search finds it: its correlation is the largest possible) is
/// played without a cross-fade, so near rate 1 the output is the source itself, spliced only
/// when its place has drifted by more than the search radius.
///
/// **The anchor.** The nominal media position of output frame k, counted from the call that set
/// the anchor at position P and rate r, is P + r·k, computed as one product (never a sum of
/// steps). A segment that starts at output frame k has its middle at its nominal position: its
/// nominal start is round(P + r·k + (r − 1)·(stride + overlap)/2). The search moves only that
/// segment; the next one's nominal start comes from the anchor again, so the search's choices
/// never add up.
///
/// **Precision.** At a constant rate r, every source frame s heard (with any weight) in output
/// frame k satisfies |s − (P + r·k)| ≤ searchRadius + 1/2 + |1 − r|·(stride + overlap)/2 source
/// frames (`sourceErrorBound(rate:)`); so a sound at source instant s is heard within that bound
/// divided by r of its nominal output instant (s − P)/r (`timingBound(rate:)`). The error is
/// each segment's own (it averages to zero over segments), never a sum. With the standard
/// configuration at 48 kHz the bound is 7.5 ms + |1 − r|·24 ms of source, plus half a frame.
/// There is no latency: the first output frame of a call plays the source around `position`,
/// read at random access.
///
/// **Rate 1.** At rate 1 from an integral position the search is skipped and the output is the
/// source, bit for bit (pieces that continue each other are not cross-faded). From a fractional
/// position the whole output is the source from the nearest frame (an error of at most half a
/// frame). Switching to rate 1 from another rate cross-fades once, at the next segment, onto the
/// exact place, and is bit-exact from there.
///
/// **Changes.** A call at another rate, or at a position that moved by at most `searchRadius`,
/// re-anchors there; the segment in progress finishes as it was placed, so for the next
/// `stride + overlap` output frames the bound grows by |r_old − r_new|·(stride + overlap) plus the
/// move. A move of more than `searchRadius` is a seek: the stretcher starts afresh there, with
/// nothing of the old place heard (as after `reset()`).
///
/// **Skipped sound.** Above rate 1, of every r·stride source frames about stride + overlap are
/// heard: a sound shorter than the rest (a click) can fall between two pieces and is not heard.
/// Below rate 1 pieces repeat source, so such a sound is heard more than once, each time within
/// the bound.
///
/// **A grid.** Two stretchers play the same pieces only if they cut them at the same places and
/// search each against the same continuation; cut where each one's calls happen to fall, a
/// participant whose voice started a request later, or whose clock drifts otherwise, chooses
/// other pieces, and a sound is heard milliseconds apart (within the bound, differently). Given
/// a `Grid` (the timeline's anchor and rate), pieces are cut where the nominal position reaches
/// the grid's cuts, and a stretcher starting inside the stretch replays the searches of the
/// pieces before its place (up to `gridReplay`); so participants of a group play the same
/// sound at the same media positions, within a frame and their clocks' drift over a piece.
///
/// **Reads.** Each call reads source frames only within `searchRadius + 1 + max(0, 1 − r)·
/// (stride + overlap)/2` before `position` and `searchRadius + 1 + (1 + r)·(stride + overlap)/2`
/// after the call's last nominal position (`position + r·(frameCount − 1)`); on a grid, a piece
/// reads up to 1 % of the stride more, and a start inside the stretch reads the pieces it replays.
public struct TimeStretcher: Sendable {
    /// The rates the stretcher plays, the shared timeline's.
    public static let rates: ClosedRange<Double> = 0.25...4
    /// The largest magnitude of a media position, in frames (2^50, centuries at 48 kHz), so that
    /// every frame index it derives is exact in a `Double` and fits an `Int64`.
    public static let positionLimit: Double = 1_125_899_906_842_624

    /// The lengths a stretcher works with, as spans of time, and the PCM's layout.
    public struct Configuration: Sendable, Equatable {
        /// Interleaved channels per frame.
        public var channels: Int
        /// Frames per second.
        public var sampleRate: Int
        /// Output frames between the starts of two pieces.
        public var stride: TimeSpan
        /// Frames cross-faded between a piece and the next.
        public var overlap: TimeSpan
        /// How far, either way, a piece may be moved from its nominal start to match the previous
        /// one's continuation.
        public var searchRadius: TimeSpan

        /// A configuration of these lengths.
        public init(channels: Int, sampleRate: Int, stride: TimeSpan, overlap: TimeSpan, searchRadius: TimeSpan) {
            self.channels = channels
            self.sampleRate = sampleRate
            self.stride = stride
            self.overlap = overlap
            self.searchRadius = searchRadius
        }

        /// Tandem's PCM (stereo at 48 kHz) with SoundTouch's classic lengths: pieces every 40 ms
        /// (several periods of the lowest voices, short enough to keep the position error small),
        /// 8 ms cross-fades (a fifth of the stride, as scaletempo's), and a search of 7.5 ms either
        /// way (a 15 ms window, holding a whole period of any pitch above 67 Hz, about scaletempo's
        /// 14 ms).
        public static let standard = Configuration(
            channels: AudioChunk.channelCount, sampleRate: AudioChunk.sampleRate,
            stride: .milliseconds(40), overlap: .milliseconds(8), searchRadius: .microseconds(7_500))
    }

    /// Where pieces are cut when every participant of a group must play the same stretch: at
    /// media positions `origin + j × rate × stride` for whole j (the timeline's anchor and rate),
    /// whatever output frames a participant's calls start at and whatever its clock's drift.
    /// Each piece is then searched against the previous piece's continuation as the grid, not
    /// the call, placed it; so two stretchers given the same grid choose the same pieces and
    /// play the same sound at the same media positions, to within a frame.
    public struct Grid: Sendable, Equatable {
        /// A media position (source frames) at which a piece starts.
        public var origin: Double
        /// The rate whose `stride` of media separates the cuts.
        public var rate: Double

        /// Pieces cut at `origin + j × rate × stride`.
        public init(origin: Double, rate: Double) {
            self.origin = origin
            self.rate = rate
        }
    }

    /// How many pieces a stretcher starting inside a grid's stretch replays from before its place
    /// (the searches only, nothing heard), at most: a stretch played from its grid's origin, or
    /// started within this many pieces of it, is every participant's alike.
    public static let gridReplay = 64

    /// The configuration it runs.
    public let configuration: Configuration
    /// Interleaved channels per frame.
    public let channels: Int
    /// Output frames between the starts of two pieces.
    public let strideFrames: Int
    /// Frames cross-faded between a piece and the next.
    public let overlapFrames: Int
    /// How many frames, either way, a piece may be moved from its nominal start.
    public let searchFrames: Int

    /// The cross-fade's gain for the incoming piece at each frame of the overlap.
    private let fadeIn: [Float]

    private var anchorPosition = 0.0
    private var anchorRate = 1.0
    private var framesSinceAnchor: Int64 = 0

    /// The current piece: `strideFrames + overlapFrames` source frames from `pieceStart`.
    private var piece: [Int16] = []
    private var pieceStart: Int64 = 0
    /// Frames of the current segment already played.
    private var pieceOffset = 0
    private var hasPiece = false
    /// The previous piece's continuation, cross-faded into the first frames of the current one.
    private var tail: [Int16] = []
    private var fading = false

    /// The grid the pieces are cut on, if the caller gives one.
    private var grid: Grid?
    /// The index on the grid of the current piece.
    private var gridPiece: Int64 = 0
    /// On a grid: the current piece's continuation as the grid placed it, the reference the next
    /// piece is searched against.
    private var gridReference: [Int16] = []
    /// The grid changed under the piece in progress: the next piece is chosen by replaying the
    /// new grid's searches, not by continuing this one's.
    private var regridding = false

    private var matchReference: [Float] = []
    /// The frames a search reads, kept from one search to the next.
    private var region: [Int16] = []
    private var matchCandidate: [Float] = []

    /// How the stretch reads its source: appends `count` frames from `start` to `into`.
    typealias Source = (_ start: Int64, _ count: Int, _ into: inout [Int16]) -> Void

    /// A stretcher for Tandem's PCM with the standard lengths.
    public init() {
        self.init(validated: .standard)
    }

    /// A stretcher with `configuration`'s lengths; refuses lengths it cannot run (an overlap of
    /// no frame or longer than the stride, a negative search, no channel).
    public init(configuration: Configuration) throws(TimeStretchError) {
        guard (1...64).contains(configuration.channels) else {
            throw .invalidConfiguration("channels \(configuration.channels) is outside 1...64")
        }
        guard (1_000...768_000).contains(configuration.sampleRate) else {
            throw .invalidConfiguration("sample rate \(configuration.sampleRate) is outside 1000...768000")
        }
        let stride = Self.frames(configuration.stride, configuration.sampleRate)
        let overlap = Self.frames(configuration.overlap, configuration.sampleRate)
        let search = Self.frames(configuration.searchRadius, configuration.sampleRate)
        guard (2...(1 << 20)).contains(stride) else {
            throw .invalidConfiguration("stride of \(stride) frames is outside 2...\(1 << 20)")
        }
        guard (1...stride).contains(overlap) else {
            throw .invalidConfiguration("overlap of \(overlap) frames is outside 1...\(stride) (the stride)")
        }
        guard (0...(1 << 20)).contains(search) else {
            throw .invalidConfiguration("search radius of \(search) frames is outside 0...\(1 << 20)")
        }
        self.init(validated: configuration)
    }

    private init(validated configuration: Configuration) {
        self.configuration = configuration
        channels = configuration.channels
        strideFrames = Self.frames(configuration.stride, configuration.sampleRate)
        overlapFrames = Self.frames(configuration.overlap, configuration.sampleRate)
        searchFrames = Self.frames(configuration.searchRadius, configuration.sampleRate)
        let overlap = overlapFrames
        fadeIn = (0..<overlap).map { frame in
            Float(0.5 - 0.5 * cos(Double.pi * (Double(frame) + 0.5) / Double(overlap)))
        }
        matchReference = [Float](repeating: 0, count: overlap)
        matchCandidate = [Float](repeating: 0, count: overlap + 2 * searchFrames)
    }

    private static func frames(_ span: TimeSpan, _ sampleRate: Int) -> Int {
        let frames = (span.seconds * Double(sampleRate)).rounded()
        return frames.isFinite ? Int(max(-1, min(Double(1 << 40), frames))) : -1
    }

    /// The nominal media position of the next output frame, in source frames: the anchor's
    /// position plus the rate times the frames rendered since the anchor. A caller that continues
    /// playing passes this back as the next call's position.
    public var position: Double {
        anchorPosition + anchorRate * Double(framesSinceAnchor)
    }

    /// The rate of the last call (1 before any).
    public var rate: Double { anchorRate }

    /// Takes `other`'s state (its position, piece, tail, grid), so that it renders what `other`
    /// would; its buffers are copied into this one's, which grow only when they are shorter: a
    /// stretcher kept to hold another's state copies it without allocating once it has held one.
    /// Both must have the same configuration.
    mutating func copyState(from other: TimeStretcher) {
        precondition(other.configuration == configuration, "a stretcher's state is copied only between equal configurations")
        anchorPosition = other.anchorPosition
        anchorRate = other.anchorRate
        framesSinceAnchor = other.framesSinceAnchor
        Self.copy(other.piece, into: &piece)
        pieceStart = other.pieceStart
        pieceOffset = other.pieceOffset
        hasPiece = other.hasPiece
        Self.copy(other.tail, into: &tail)
        fading = other.fading
        grid = other.grid
        gridPiece = other.gridPiece
        Self.copy(other.gridReference, into: &gridReference)
        regridding = other.regridding
    }

    private static func copy(_ source: [Int16], into destination: inout [Int16]) {
        destination.removeAll(keepingCapacity: true)
        destination.append(contentsOf: source)
    }

    /// The largest distance, in source frames, between a source frame heard in an output frame
    /// and that output frame's nominal position, at a constant `rate` (see the type's notes).
    public func sourceErrorBound(rate: Double) -> Double {
        Double(searchFrames) + 0.5 + abs(1 - rate) * Double(strideFrames + overlapFrames) / 2
    }

    /// The largest distance in output time between the instant a source frame is heard and its
    /// nominal instant (its media position's, on the timeline), at a constant `rate`:
    /// `sourceErrorBound(rate:)` divided by the rate, at the configured sample rate.
    public func timingBound(rate: Double) -> TimeSpan {
        .seconds(sourceErrorBound(rate: rate) / rate / Double(configuration.sampleRate))
    }

    /// Forgets what was playing: the next call starts afresh at its position, with no cross-fade
    /// from anything heard before (after a seek).
    public mutating func reset() {
        hasPiece = false
        fading = false
        pieceOffset = 0
    }

    /// Appends `frameCount` frames to `output`, the first playing at media `position` (source
    /// frames) at `rate`, reading the source through `source(start, count)`, which returns the
    /// interleaved samples of `count` frames from absolute frame `start` (zeros where there are
    /// none; a shorter answer is completed with zeros, a longer one cut).
    ///
    /// With a `grid`, pieces are cut where the grid says rather than every `stride` output
    /// frames from the call that anchored, so that stretchers given the same grid play alike
    /// (see `Grid`); a call with another grid plays the piece in progress on to its next cut.
    public mutating func render(
        frameCount: Int, at position: Double, rate: Double, grid: Grid? = nil, into output: inout [Int16],
        source: (_ start: Int64, _ count: Int) -> [Int16]
    ) throws(TimeStretchError) {
        try render(frameCount: frameCount, at: position, rate: rate, grid: grid, into: &output) { start, count, into in
            into.append(contentsOf: source(start, count))
        }
    }

    /// As `render(frameCount:at:rate:grid:into:source:)`, reading the source through
    /// `reading(start, count, into)`, which appends the interleaved samples of `count` frames
    /// from absolute frame `start` to `into` (an empty array of the stretcher's, kept from one
    /// read to the next, so that reading allocates nothing once it has grown; a shorter answer
    /// is completed with zeros, a longer one cut). With `output` of enough capacity, rendering
    /// then allocates nothing.
    public mutating func render(
        frameCount: Int, at position: Double, rate: Double, grid: Grid? = nil, into output: inout [Int16],
        reading source: (_ start: Int64, _ count: Int, _ into: inout [Int16]) -> Void
    ) throws(TimeStretchError) {
        guard frameCount >= 0 else { throw .negativeFrameCount(frameCount) }
        guard position.isFinite, abs(position) <= Self.positionLimit else { throw .positionOutOfRange(position) }
        guard rate.isFinite, Self.rates.contains(rate) else { throw .rateOutOfRange(rate) }
        if let grid {
            guard grid.origin.isFinite, abs(grid.origin) <= Self.positionLimit else { throw .positionOutOfRange(grid.origin) }
            guard grid.rate.isFinite, Self.rates.contains(grid.rate) else { throw .rateOutOfRange(grid.rate) }
        }
        if position != self.position || rate != anchorRate {
            if hasPiece, abs(position - self.position) > Double(searchFrames) {
                reset()
            }
            anchorPosition = position
            anchorRate = rate
            framesSinceAnchor = 0
        }
        if grid != self.grid {
            // Another grid (a timeline re-anchored, or a change of rate): the piece in progress
            // plays on to the new grid's next cut, and cross-fades there into the piece the new
            // grid places there, its searches replayed as for a start. Without one, or from none,
            // the stretch starts afresh.
            if let grid, self.grid != nil, hasPiece {
                gridPiece = Int64(((position - grid.origin) / (grid.rate * Double(strideFrames))).rounded(.down))
                regridding = true
            } else {
                reset()
            }
            self.grid = grid
        }
        if let grid {
            renderOnGrid(grid, frameCount: frameCount, into: &output, source: source)
            return
        }
        var remaining = frameCount
        while remaining > 0 {
            if !hasPiece || pieceOffset == strideFrames {
                startSegment(source)
            }
            let count = min(remaining, strideFrames - pieceOffset)
            emit(count, into: &output)
            pieceOffset += count
            framesSinceAnchor += Int64(count)
            remaining -= count
        }
    }

    /// Places the next piece: at its nominal start at rate 1 or after a reset, else moved within
    /// the search radius to where it best continues the previous piece.
    private mutating func startSegment(_ source: Source) {
        let span = strideFrames + overlapFrames
        let middle = position + (anchorRate - 1) * Double(span) / 2
        let nominal = Self.nearestFrame(middle)
        guard hasPiece else {
            Self.read(source, nominal, span, channels, into: &piece)
            pieceStart = nominal
            pieceOffset = 0
            hasPiece = true
            fading = false
            return
        }
        let continuation = pieceStart + Int64(strideFrames)
        tail.removeAll(keepingCapacity: true)
        tail.append(contentsOf: piece[(strideFrames * channels)...])
        let start: Int64
        if anchorRate == 1 || searchFrames == 0 {
            start = nominal
            Self.read(source, nominal, span, channels, into: &piece)
        } else {
            start = search(near: nominal, span: span, against: tail, source)
        }
        pieceStart = start
        pieceOffset = 0
        fading = start != continuation
    }

    /// Output frames a piece on a grid may play beyond the stride (a drifting clock's segments
    /// are up to ±0.5 % longer or shorter than the stride, and rounding adds a frame).
    private var gridMargin: Int { strideFrames / 100 + 2 }

    /// Renders `frameCount` frames on `grid`: each piece plays until the nominal position reaches
    /// the grid's next cut, then the next piece, searched against this one's continuation as the
    /// grid placed it, cross-fades in from where this one was left.
    private mutating func renderOnGrid(_ grid: Grid, frameCount: Int, into output: inout [Int16],
                                       source: Source) {
        let spacing = grid.rate * Double(strideFrames)
        let limit = strideFrames + gridMargin
        var remaining = frameCount
        while remaining > 0 {
            if !hasPiece { startOnGrid(grid, source) }
            let cut = grid.origin + Double(gridPiece + 1) * spacing
            // The frames whose nominal position is still before the cut.
            let before = Int(max(0, ((cut - position) / anchorRate).rounded(.up)))
            guard before > 0, pieceOffset < limit else {
                tail.removeAll(keepingCapacity: true)
                tail.append(contentsOf: piece[(pieceOffset * channels)..<((pieceOffset + overlapFrames) * channels)])
                let continuation = pieceStart + Int64(pieceOffset)
                if before > 0 {
                    // The piece ran out before the cut (the grid changed under it, or a clock far
                    // slower than the grid's rate): a piece that continues it bridges to the cut,
                    // and the grid's own pieces go on from there as if it had not been.
                    bridge(source)
                } else if regridding {
                    replayOnGrid(grid, to: gridPiece + 1, source)
                    regridding = false
                } else {
                    placeOnGrid(grid, gridPiece + 1, source)
                }
                fading = pieceStart != continuation
                continue
            }
            let count = min(remaining, before, limit - pieceOffset)
            emit(count, into: &output)
            pieceOffset += count
            framesSinceAnchor += Int64(count)
            remaining -= count
        }
    }

    /// Makes the current piece one that plays from the current position, moved within the search
    /// radius to where it best continues `tail` (where the piece before it was left).
    private mutating func bridge(_ source: Source) {
        let span = strideFrames + overlapFrames + gridMargin
        let middle = position + (anchorRate - 1) * Double(strideFrames + overlapFrames) / 2
        let nominal = Self.nearestFrame(middle)
        pieceStart = search(near: nominal, span: span, against: tail, source)
        pieceOffset = 0
    }

    /// Starts on `grid` at the current position: replays the searches of up to `gridReplay`
    /// pieces before the one the position is in, so as to choose that one as a stretcher that
    /// played them would, and plays it from the position, with no cross-fade.
    private mutating func startOnGrid(_ grid: Grid, _ source: Source) {
        let spacing = grid.rate * Double(strideFrames)
        let current = Int64(((position - grid.origin) / spacing).rounded(.down))
        replayOnGrid(grid, to: current, source)
        let cut = grid.origin + Double(current) * spacing
        pieceOffset = Int(min(Double(strideFrames + gridMargin - 1), max(0, ((position - cut) / anchorRate).rounded())))
        fading = false
        regridding = false
    }

    /// Makes piece `index` of `grid` the current one as a stretcher that played the grid's
    /// pieces before it would have chosen it: the first of up to `gridReplay` before it placed
    /// at its nominal start (or the grid's first, if nearer), each next one searched.
    private mutating func replayOnGrid(_ grid: Grid, to index: Int64, _ source: Source) {
        let first = index <= 0 ? index : max(0, index - Int64(Self.gridReplay))
        hasPiece = false
        for piece in first...index { placeOnGrid(grid, piece, source) }
    }

    /// Makes piece `index` of `grid` the current one: at its nominal start (its middle at the
    /// nominal position of its segment's middle), moved within the search radius to where it
    /// best continues the previous piece as the grid placed it (unless it is the first, or the
    /// rate is 1).
    private mutating func placeOnGrid(_ grid: Grid, _ index: Int64, _ source: Source) {
        let span = strideFrames + overlapFrames + gridMargin
        let cut = grid.origin + Double(index) * grid.rate * Double(strideFrames)
        let middle = cut + (grid.rate - 1) * Double(strideFrames + overlapFrames) / 2
        let nominal = Self.nearestFrame(middle)
        if !hasPiece || grid.rate == 1 || searchFrames == 0 {
            Self.read(source, nominal, span, channels, into: &piece)
            pieceStart = nominal
        } else {
            pieceStart = search(near: nominal, span: span, against: gridReference, source)
        }
        gridReference.removeAll(keepingCapacity: true)
        gridReference.append(contentsOf: piece[(strideFrames * channels)..<((strideFrames + overlapFrames) * channels)])
        gridPiece = index
        pieceOffset = 0
        hasPiece = true
    }

    /// The frame nearest `position`, within twice the position limit (a piece's middle can lie
    /// beyond the limit by half a piece).
    private static func nearestFrame(_ position: Double) -> Int64 {
        Int64(max(-2 * positionLimit, min(2 * positionLimit, position.rounded())))
    }

    /// Makes the piece the `span` frames that start within the search radius of `nominal` where
    /// they best continue `reference`; returns where it starts.
    private mutating func search(near nominal: Int64, span: Int, against reference: [Int16],
                                 _ source: Source) -> Int64 {
        Self.read(source, nominal - Int64(searchFrames), span + 2 * searchFrames, channels, into: &region)
        let offset = bestOffset(in: region, against: reference)
        piece.removeAll(keepingCapacity: true)
        piece.append(contentsOf: region[(offset * channels)..<((offset + span) * channels)])
        return nominal - Int64(searchFrames) + Int64(offset)
    }

    /// The offset into `region` (which starts `searchFrames` before the nominal start) whose
    /// first `overlapFrames` frames best match `tail`, by cross-correlation of the channels'
    /// sums divided by the candidate's norm (largest, by Cauchy-Schwarz, for a candidate that is
    /// the tail itself); ties go to the offset nearest the nominal start.
    private mutating func bestOffset(in region: [Int16], against tail: [Int16]) -> Int {
        let overlap = overlapFrames
        let channels = self.channels
        let candidates = 2 * searchFrames + 1
        let length = overlap + candidates - 1
        tail.withUnsafeBufferPointer { tail in
            matchReference.withUnsafeMutableBufferPointer { reference in
                for frame in 0..<overlap {
                    var sum: Float = 0
                    for channel in 0..<channels { sum += Float(tail[frame * channels + channel]) }
                    reference[frame] = sum
                }
            }
        }
        region.withUnsafeBufferPointer { region in
            matchCandidate.withUnsafeMutableBufferPointer { candidate in
                for frame in 0..<length {
                    var sum: Float = 0
                    for channel in 0..<channels { sum += Float(region[frame * channels + channel]) }
                    candidate[frame] = sum
                }
            }
        }
        var best = searchFrames
        var bestScore = -Double.infinity
        matchReference.withUnsafeBufferPointer { reference in
            matchCandidate.withUnsafeBufferPointer { candidate in
                var energy = 0.0
                for frame in 0..<overlap { energy += Double(candidate[frame] * candidate[frame]) }
                for offset in 0..<candidates {
                    var correlation: Float = 0
                    for frame in 0..<overlap { correlation += reference[frame] * candidate[offset + frame] }
                    let score = Double(correlation) / max(energy, 1).squareRoot()
                    if score > bestScore || (score == bestScore && abs(offset - searchFrames) < abs(best - searchFrames)) {
                        best = offset
                        bestScore = score
                    }
                    if offset + 1 < candidates {
                        let leaving = Double(candidate[offset]), entering = Double(candidate[offset + overlap])
                        energy = max(0, energy + entering * entering - leaving * leaving)
                    }
                }
            }
        }
        return best
    }

    /// Appends `count` frames of the current segment from `pieceOffset`, cross-fading the tail
    /// into the piece over the overlap when the piece does not continue it.
    private func emit(_ count: Int, into output: inout [Int16]) {
        let channels = self.channels
        let first = pieceOffset
        let fadeEnd = fading ? min(first + count, overlapFrames) : first
        if first < fadeEnd {
            piece.withUnsafeBufferPointer { piece in
                tail.withUnsafeBufferPointer { tail in
                    for frame in first..<fadeEnd {
                        let gain = fadeIn[frame]
                        for channel in 0..<channels {
                            let index = frame * channels + channel
                            let mixed = Float(tail[index]) * (1 - gain) + Float(piece[index]) * gain
                            output.append(Int16(max(-32_768, min(32_767, mixed.rounded()))))
                        }
                    }
                }
            }
        }
        let copyStart = max(first, fadeEnd)
        output.append(contentsOf: piece[(copyStart * channels)..<((first + count) * channels)])
    }

    /// Replaces `samples` with `count` frames from `start`, exactly: the source's answer
    /// completed with zeros or cut (in place: the array keeps its capacity).
    private static func read(_ source: Source, _ start: Int64, _ count: Int, _ channels: Int, into samples: inout [Int16]) {
        samples.removeAll(keepingCapacity: true)
        source(start, count, &samples)
        let wanted = count * channels
        if samples.count > wanted {
            samples.removeLast(samples.count - wanted)
        } else if samples.count < wanted {
            samples.append(contentsOf: repeatElement(0, count: wanted - samples.count))
        }
    }
}
