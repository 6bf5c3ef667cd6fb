import Foundation
import TandemIdentity

/// The pure core of a streamed item's reader: which holder to ask, which blocks to ask for
/// (the one a read waits for first, then a read-ahead window), when to give up on a request and
/// ask again or elsewhere, what the bounded cache keeps, and whether what arrived is the item.
/// No I/O and no clock of its own: every input carries the instant (nanoseconds of an injected
/// clock), and it answers with directives, which its shell (`SessionStreaming`) carries out.
///
/// The item is cut into blocks of `Configuration.blockSize`; one request asks for one block, and
/// the holder answers with chunks of at most `StreamServerCore.Configuration.chunkSize`.
///
/// **Verification.** A content identity (`ContentIdentity`) covers the size and a hash of the
/// first and last 64 KiB. No read is answered until the blocks holding those bytes arrived and
/// hash to the identity: a holder with other content (or one that lies about the ends) is
/// dropped, its blocks with it, and another asked. The middle is covered by no hash: it is
/// trusted as the word of the holder, a session participant whose every chunk is signed by its
/// own key and sealed with the session's (the relay can neither read nor change it).
public struct StreamReaderCore: Sendable {
    /// Sizes, windows and timeouts.
    public struct Configuration: Sendable, Hashable {
        /// The bytes one request asks for (and the cache's unit).
        public var blockSize = 256 * 1024
        /// How many blocks past the last one read are asked for ahead of need.
        public var readAheadBlocks = 16
        /// How many requests may wait for their replies at once (bytes in flight: this ×
        /// `blockSize`).
        public var maximumRequestsInFlight = 8
        /// How many bytes of blocks the cache keeps (at least the read-ahead window is kept).
        public var cacheBytes = 24 * 1024 * 1024
        /// How long a request may go without a chunk arriving before it is asked again (ns).
        public var requestTimeout: Int64 = 2_000_000_000
        /// How many timeouts a holder may cause in a row before the next holder is asked.
        public var timeoutsPerHolder = 2
        /// How long a holder that answered `busy` is left alone before it is asked again (ns).
        public var busyBackoff: Int64 = 50_000_000

        /// The defaults.
        public init() {}
    }

    /// What the shell carries out.
    public enum Directive: Sendable, Equatable {
        /// Send `message` to the participant `to`.
        case send(StreamMessage, to: UUID)
        /// Block `index` is in the cache: readers waiting for it may go on.
        case blockArrived(Int)
        /// No holder is left (or none will serve): readers wait, and the program should say
        /// that playback is not possible for this participant.
        case suspended
        /// A holder is there again after `suspended`.
        case resumed
        /// `holder`'s copy is not the item (its ends do not hash to the identity): dropped.
        case rejectedHolder(UUID)
        /// Call `onTick` at this instant (the earliest timeout or back-off).
        case wake(at: Int64)
    }

    /// What a read finds.
    public enum ReadOutcome: Sendable, Equatable {
        /// The block holding the offset: its bytes and the offset of its first byte.
        case available(start: Int64, bytes: [UInt8])
        /// Not here yet: wait for `blockArrived` of `block` (or `suspended`).
        case pending(block: Int)
        /// The offset is at or past the end.
        case end
    }

    /// Counts for reports.
    public struct Statistics: Sendable, Equatable {
        /// Requests sent, retries included.
        public var requests = 0
        /// Requests sent again (a timeout, a holder's departure or refusal).
        public var retries = 0
        /// Bytes of blocks received whole.
        public var bytesReceived: Int64 = 0
        /// Reads answered from the cache at once.
        public var hits = 0
        /// Reads that had to wait.
        public var misses = 0
        /// Blocks evicted from the cache.
        public var evictions = 0
        /// Chunks ignored: unknown request, wrong sender, out of place.
        public var ignoredChunks = 0
    }

    private struct Flight: Sendable {
        var block: Int
        var holder: UUID
        var lastProgress: Int64
        var bytes: [UInt8]
    }

    private struct Cached: Sendable {
        var bytes: [UInt8]
        var lastUse: UInt64
    }

    /// The item's content identity (`s=SIZE;h=HASH`, a duration aside).
    public let identity: String
    /// Its size in bytes.
    public let size: Int64
    /// The sizes, windows and timeouts in force.
    public let configuration: Configuration
    /// Counts for reports.
    public private(set) var statistics = Statistics()
    /// Holders in the order they are asked: the host first, then others as they announced.
    public private(set) var holders: [UUID] = []
    /// Whether the identity's ends have been checked against what arrived.
    public private(set) var verified = false
    /// Whether no holder is left (`suspended` said, `resumed` not yet).
    public private(set) var isSuspended = false

    private var hostHolder: UUID?
    private var timeouts: [UUID: Int] = [:]
    private var busyUntil: [UUID: Int64] = [:]
    private var flights: [UInt64: Flight] = [:]
    private var cache: [Int: Cached] = [:]
    private var cachedBytes = 0
    private var uses: UInt64 = 0
    private var nextRequest: UInt64 = 1
    /// The block of the latest read: the read-ahead window starts after it.
    private var position = 0
    /// Blocks a read waits for.
    private var waiting: Set<Int> = []
    private var started = false

    /// A reader of the item `identity` of `size` bytes (the identity's own `s=` when nil).
    /// Nil when the identity names no size and none is given, or the size is negative or beyond
    /// `maximumSize` (a holder's word, which no arithmetic here may overflow on).
    /// Request ids start at `firstRequestID` (a shell reading several items gives each its own
    /// range, and routes replies by it).
    public init?(identity: String, size: Int64? = nil, configuration: Configuration = Configuration(), firstRequestID: UInt64 = 1) {
        let content = ContentIdentity.content(of: identity)
        guard let size = size ?? StreamReaderCore.size(in: content), (0...StreamReaderCore.maximumSize).contains(size),
              configuration.blockSize > 0, configuration.maximumRequestsInFlight > 0 else { return nil }
        self.identity = content
        self.size = size
        self.configuration = configuration
        nextRequest = max(1, firstRequestID)
    }

    /// The largest item streamed: 1 PiB, far beyond any file and far below where block
    /// arithmetic would overflow.
    public static let maximumSize: Int64 = 1 << 50

    /// The size an identity names (`s=SIZE`), if any.
    public static func size(in identity: String) -> Int64? {
        identity.split(separator: ";").first { $0.hasPrefix("s=") }.flatMap { Int64($0.dropFirst(2)) }
    }

    /// How many blocks the item has.
    public var blockCount: Int { Int((size + Int64(configuration.blockSize) - 1) / Int64(configuration.blockSize)) }

    /// The blocks the identity's hashes cover: those holding the first and the last 64 KiB.
    public var verifiedBlocks: Set<Int> {
        guard size > 0 else { return [] }
        let hashed = Int64(ContentIdentity.hashedBytes)
        let block = Int64(configuration.blockSize)
        let head = 0...Int((min(hashed, size) - 1) / block)
        let tail = Int(max(0, size - hashed) / block)...Int((size - 1) / block)
        return Set(head).union(tail)
    }

    // MARK: Holders

    /// `holder` holds the item (it said so); `host`: it started the session, so it is asked first.
    public mutating func onHolder(_ holder: UUID, host: Bool, now: Int64) -> [Directive] {
        if host { hostHolder = holder }
        if !holders.contains(holder) { holders.append(holder) }
        if let host = hostHolder, let index = holders.firstIndex(of: host), index != 0 {
            holders.remove(at: index)
            holders.insert(host, at: 0)
        }
        var directives: [Directive] = []
        if isSuspended {
            isSuspended = false
            directives.append(.resumed)
        }
        return directives + fill(now: now)
    }

    /// `holder` left the session, or no longer holds the item: its requests go elsewhere.
    public mutating func onHolderGone(_ holder: UUID, now: Int64) -> [Directive] {
        holders.removeAll { $0 == holder }
        timeouts[holder] = nil
        busyUntil[holder] = nil
        if hostHolder == holder { hostHolder = nil }
        return reissue(from: holder, now: now)
    }

    /// The holder asked now: the first that has not timed out too often in a row (all of them
    /// having, the first again).
    public var currentHolder: UUID? {
        holders.first { timeouts[$0, default: 0] < configuration.timeoutsPerHolder } ?? holders.first
    }

    // MARK: Reads

    /// A read at `offset`: the block holding it when cached (and the item verified), else which
    /// block to wait for, with the requests that fetch it.
    public mutating func onRead(offset: Int64, now: Int64) -> (outcome: ReadOutcome, directives: [Directive]) {
        guard offset >= 0, offset < size else { return (.end, []) }
        let block = Int(offset / Int64(configuration.blockSize))
        position = block
        if verified, var cached = cache[block] {
            uses += 1
            cached.lastUse = uses
            cache[block] = cached
            statistics.hits += 1
            let start = Int64(block) * Int64(configuration.blockSize)
            return (.available(start: start, bytes: cached.bytes), fill(now: now))
        }
        statistics.misses += 1
        waiting.insert(block)
        started = true
        return (.pending(block: block), fill(now: now))
    }

    /// The block with `index`, if cached and verified (without counting a use).
    public func cachedBlock(_ index: Int) -> [UInt8]? { verified ? cache[index]?.bytes : nil }

    // MARK: Replies

    /// A message from `sender`.
    public mutating func onMessage(_ message: StreamMessage, from sender: UUID, now: Int64) -> [Directive] {
        switch message {
        case .chunk(let id, let offset, let bytes):
            return onChunk(id: id, offset: offset, bytes: bytes, from: sender, now: now)
        case .refusal(let id, let reason):
            guard let flight = flights[id], flight.holder == sender else { return [] }
            flights[id] = nil
            switch reason {
            case .busy:
                busyUntil[sender] = now + configuration.busyBackoff
                statistics.retries += 1
                return fill(now: now)
            case .notHeld, .badRange, .unreadable:
                return onHolderGone(sender, now: now)
            }
        case .holding(let items, let host):
            guard items.contains(where: { ContentIdentity.sameContent($0.identity, identity) }) else {
                // It no longer lists this item.
                return holders.contains(sender) ? onHolderGone(sender, now: now) : []
            }
            return onHolder(sender, host: host, now: now)
        case .request, .inquiry:
            return []
        }
    }

    private mutating func onChunk(id: UInt64, offset: Int64, bytes: [UInt8], from sender: UUID, now: Int64) -> [Directive] {
        guard var flight = flights[id], flight.holder == sender else {
            statistics.ignoredChunks += 1
            return []
        }
        let start = Int64(flight.block) * Int64(configuration.blockSize)
        let length = blockLength(flight.block)
        guard offset == start + Int64(flight.bytes.count), flight.bytes.count + bytes.count <= length, !bytes.isEmpty else {
            statistics.ignoredChunks += 1
            return []
        }
        flight.bytes += bytes
        flight.lastProgress = now
        timeouts[sender] = 0
        guard flight.bytes.count == length else {
            flights[id] = flight
            return []
        }
        flights[id] = nil
        statistics.bytesReceived += Int64(length)
        uses += 1
        if let old = cache[flight.block] { cachedBytes -= old.bytes.count }
        cache[flight.block] = Cached(bytes: flight.bytes, lastUse: uses)
        cachedBytes += length
        var directives: [Directive] = []
        if !verified {
            switch verification() {
            case nil:
                break
            case true?:
                verified = true
                directives += waiting.sorted().filter { cache[$0] != nil }.map { .blockArrived($0) }
            case false?:
                directives.append(.rejectedHolder(sender))
                cache.removeAll()
                cachedBytes = 0
                directives += onHolderGone(sender, now: now)
                return directives
            }
        } else if waiting.contains(flight.block) {
            directives.append(.blockArrived(flight.block))
        }
        if verified { waiting = waiting.filter { cache[$0] == nil } }
        evict()
        return directives + fill(now: now)
    }

    /// Whether the cached ends hash to the identity; nil while one of them is missing.
    private func verification() -> Bool? {
        let needed = verifiedBlocks
        let blocks = cache
        guard needed.allSatisfy({ blocks[$0] != nil }) else { return nil }
        let blockSize = Int64(configuration.blockSize)
        let size = self.size
        let computed = ContentIdentity.of(size: size) { offset, count in
            var collected: [UInt8] = []
            var at = offset
            while collected.count < count, at < size, let bytes = blocks[Int(at / blockSize)]?.bytes {
                let from = Int(at - Int64(Int(at / blockSize)) * blockSize)
                let taken = bytes[from..<min(bytes.count, from + count - collected.count)]
                collected += taken
                at += Int64(taken.count)
            }
            return collected
        }
        return ContentIdentity.sameContent(computed, identity)
    }

    // MARK: Time

    /// Requests that went too long without a chunk are asked again, of the next holder once
    /// this one timed out `timeoutsPerHolder` times in a row; holders' back-offs end.
    public mutating func onTick(now: Int64) -> [Directive] {
        var directives: [Directive] = []
        var silent: Set<UUID> = []
        for (id, flight) in flights where now - flight.lastProgress >= configuration.requestTimeout {
            flights[id] = nil
            silent.insert(flight.holder)
            statistics.retries += 1
        }
        // One timeout per holder and tick, however many of its requests it left unanswered.
        for holder in silent { timeouts[holder, default: 0] += 1 }
        busyUntil = busyUntil.filter { $0.value > now }
        directives += fill(now: now)
        return directives
    }

    // MARK: Deciding what to ask

    private mutating func reissue(from holder: UUID, now: Int64) -> [Directive] {
        let lost = flights.filter { $0.value.holder == holder }
        for id in lost.keys { flights[id] = nil }
        statistics.retries += lost.count
        return fill(now: now)
    }

    /// The blocks wanted, most urgent first: the ends until verified, the blocks reads wait for,
    /// then the read-ahead window.
    private func wanted() -> [Int] {
        // Nothing before the first read: an item opened is read at once, one never opened costs nothing.
        guard started else { return [] }
        var order: [Int] = []
        if !verified { order += verifiedBlocks.sorted() }
        order += waiting.sorted()
        do {
            let end = min(blockCount, position + 1 + configuration.readAheadBlocks)
            if position + 1 < end { order += Array((position + 1)..<end) }
        }
        var seen: Set<Int> = []
        return order.filter { seen.insert($0).inserted }
    }

    private mutating func fill(now: Int64) -> [Directive] {
        var directives: [Directive] = []
        guard let holder = currentHolder else {
            // Nobody to ask: suspended, unless every block is here already (nothing more is needed).
            let whole = verified && cache.count == blockCount
            if !isSuspended && started && (!waiting.isEmpty || !whole) {
                isSuspended = true
                directives.append(.suspended)
            }
            return directives
        }
        let inFlight = Set(flights.values.map(\.block))
        if let until = busyUntil[holder], until > now {
            return [.wake(at: until)]
        }
        for block in wanted() where flights.count < configuration.maximumRequestsInFlight {
            guard cache[block] == nil, !inFlight.contains(block) else { continue }
            let id = nextRequest
            nextRequest += 1
            let start = Int64(block) * Int64(configuration.blockSize)
            flights[id] = Flight(block: block, holder: holder, lastProgress: now, bytes: [])
            statistics.requests += 1
            directives.append(.send(.request(id: id, identity: identity, offset: start, length: blockLength(block)), to: holder))
        }
        if let earliest = flights.values.map(\.lastProgress).min() {
            directives.append(.wake(at: earliest + configuration.requestTimeout))
        }
        return directives
    }

    private func blockLength(_ block: Int) -> Int {
        let start = Int64(block) * Int64(configuration.blockSize)
        return Int(min(Int64(configuration.blockSize), size - start))
    }

    /// Drops the least recently used blocks beyond `cacheBytes`, never one a read waits for, one
    /// of the read-ahead window, or (until verified) one of the ends.
    private mutating func evict() {
        guard cachedBytes > configuration.cacheBytes else { return }
        let window = position...(position + configuration.readAheadBlocks)
        let keep = waiting.union(verified ? [] : verifiedBlocks)
        let candidates = cache.filter { !window.contains($0.key) && !keep.contains($0.key) }.sorted { $0.value.lastUse < $1.value.lastUse }
        for (index, cached) in candidates where cachedBytes > configuration.cacheBytes {
            cache[index] = nil
            cachedBytes -= cached.bytes.count
            statistics.evictions += 1
        }
    }

    /// Bytes the cache holds now.
    public var cacheOccupancy: Int { cachedBytes }
    /// Requests waiting for their replies now.
    public var requestsInFlight: Int { flights.count }
}
