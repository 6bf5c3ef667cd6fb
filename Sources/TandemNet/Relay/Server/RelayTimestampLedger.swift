import TandemClock

/// The clock the kernel's software socket timestamps are read on (`CLOCK_REALTIME`): its
/// instants are compared with each other only, never with a monotonic reading.
public enum KernelStampTimeKind: TimeKind {}

/// An instant of the kernel's software socket timestamps.
public typealias KernelStamp = TimePoint<KernelStampTimeKind>

/// What a forwarder of records (the relay in its measuring mode, or a bare forwarder beside
/// it) saw by the kernel's clocks: the instant each record's frame arrived, which bytes of which
/// stream carried each recipient's copy, and the transmit timestamps the kernel queued for the
/// writes. Pure: it matches them and says how long each copy took from arrival to the stack.
///
/// A transmit timestamp with `SOF_TIMESTAMPING_OPT_ID` on a TCP socket carries the index of the
/// last byte of the write it stamps, counted from 0 when stamping was enabled, modulo 2³². A
/// copy ending at byte `b` left with the first write whose last byte is at or past `b`, so its
/// time is the first stamp of the stream (of the stage asked for) whose key is not before `b`.
public struct RelayTimestampLedger: Sendable {
    /// Where in the stack a transmit timestamp was taken.
    public enum Stage: Sendable, CaseIterable {
        /// When the write entered the packet scheduler (`SOF_TIMESTAMPING_TX_SCHED`).
        case scheduled
        /// When the device took it (`SOF_TIMESTAMPING_TX_SOFTWARE`; on loopback, its delivery).
        case sent
    }

    /// How long copies took from their record's arrival to one stage of the stack.
    public struct Delays: Sendable, Equatable {
        /// Each copy whose record arrival and transmit stamp are both known, stream by stream.
        public var perSend: [TimeSpan] = []
        /// Each record all of whose copies were matched: arrival to its last copy.
        public var lastSend: [TimeSpan] = []
        /// Copies with no transmit stamp at or past their last byte.
        public var unmatched = 0

        /// Nothing measured.
        public init() {}
    }

    private struct Send {
        var record: Int
        var lastByte: UInt32
    }

    private struct Stamp {
        var key: UInt32
        var time: KernelStamp
    }

    private var arrivals: [KernelStamp] = []
    private var sends: [Int: [Send]] = [:]
    private var stamps: [Stage: [Int: [Stamp]]] = [.scheduled: [:], .sent: [:]]

    /// An empty ledger.
    public init() {}

    /// Records arrived so far.
    public var records: Int { arrivals.count }

    /// Copies sent so far.
    public var copies: Int { sends.values.reduce(0) { $0 + $1.count } }

    /// Transmit stamps of `stage` so far: one per write that carried bytes.
    public func stampCount(_ stage: Stage) -> Int { stamps[stage]?.values.reduce(0) { $0 + $1.count } ?? 0 }

    /// A record whose frame arrived at `time`; returns its number for `send`.
    public mutating func arrive(at time: KernelStamp) -> Int {
        arrivals.append(time)
        return arrivals.count - 1
    }

    /// A copy of `record` queued on `stream`, its last byte at index `lastByte` of the stream
    /// (counted from 0 when stamping was enabled on it). Copies of one stream come in order.
    public mutating func send(record: Int, stream: Int, lastByte: Int) {
        precondition(record >= 0 && record < arrivals.count, "a copy of a record that never arrived")
        sends[stream, default: []].append(Send(record: record, lastByte: UInt32(truncatingIfNeeded: lastByte)))
    }

    /// A transmit timestamp read from `stream`'s error queue: the write whose last byte has
    /// index `key` reached `stage` at `time`. Stamps of one stream and stage come in order.
    public mutating func stamp(stream: Int, key: UInt32, stage: Stage, at time: KernelStamp) {
        stamps[stage]![stream, default: []].append(Stamp(key: key, time: time))
    }

    /// Arrival to `stage` for each copy and for each record's last copy.
    public func delays(to stage: Stage) -> Delays {
        var delays = Delays()
        var latest = [KernelStamp?](repeating: nil, count: arrivals.count)
        var complete = [Bool](repeating: true, count: arrivals.count)
        var hasCopies = [Bool](repeating: false, count: arrivals.count)
        let byStream = stamps[stage] ?? [:]
        for stream in sends.keys.sorted() {
            let stamped = byStream[stream] ?? []
            var next = 0
            for send in sends[stream]! {
                hasCopies[send.record] = true
                // Keys wrap at 2³²: "not before" is a non-negative difference as a signed number.
                while next < stamped.count, Int32(bitPattern: stamped[next].key &- send.lastByte) < 0 { next += 1 }
                guard next < stamped.count else {
                    delays.unmatched += 1
                    complete[send.record] = false
                    continue
                }
                let time = stamped[next].time
                delays.perSend.append(time - arrivals[send.record])
                latest[send.record] = max(latest[send.record] ?? time, time)
            }
        }
        for record in arrivals.indices where hasCopies[record] && complete[record] {
            if let last = latest[record] { delays.lastSend.append(last - arrivals[record]) }
        }
        return delays
    }
}
