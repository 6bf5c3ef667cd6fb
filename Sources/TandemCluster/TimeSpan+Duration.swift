import TandemClock

extension TimeSpan {
    /// `duration`, to the nanosecond: where a `Duration` of the cluster's (a heartbeat, a wait)
    /// becomes a timer on a loop, whose API takes typed time.
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self.init(nanoseconds: seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
