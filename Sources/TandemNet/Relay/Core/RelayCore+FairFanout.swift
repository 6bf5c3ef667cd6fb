import Foundation

/// Fan-out shared fairly: a session's allowance in debt pauses those who made the debt, in
/// proportion to their part of it, and one source's senders share one allowance over all the
/// sessions they send into, so that bulk in sessions of one's own cannot take the relay from
/// everyone else.
extension RelayCore {
    /// Whether (and until when) the sender `key`, from the source keyed `source`, is paused
    /// after a frame that spent `spent` of its session's fan-out at `now`.
    ///
    /// - Its source's allowance (`fanoutDeliveriesPerSecondPerSource`, `fanoutBytesPerSecondPerSource`)
    ///   is spent alike; in debt, the sender waits until it is paid back.
    /// - Its session's allowance in debt by `D` seconds pauses it for `D × its level ÷ the
    ///   largest level in the session` (`FanoutMeter`): the heaviest sender pays the whole debt
    ///   back, one that sent a little waits a little, and less than a millisecond is no pause.
    /// - A frame that reached a connected reader whose outbox is past
    ///   `RelayCoreConfiguration.backlogHighWater` of its caps pauses its sender for up to
    ///   `backlogPause` (in proportion to how far past, all of it at twice the mark), shared out
    ///   by level the same way: senders go at the pace of the slowest reader that keeps reading,
    ///   rather than overflowing its outbox and having it removed.
    mutating func fanoutPause(_ key: ParticipantKey, spent: (deliveries: Int, bytes: Int), source: String?,
                              at now: Int64) -> Int64? {
        var until: Int64?
        if spent.deliveries > 0, let budget = sessions[key.session]?.fanout {
            sessions[key.session]?.participants[key.participant]?.fanoutMeter.add(
                budget.seconds(deliveries: spent.deliveries, bytes: spent.bytes), at: now)
        }
        var wait: Int64 = 0
        if let sessionUntil = sessions[key.session]?.fanout?.pausedUntil(at: now) { wait = sessionUntil - now }
        if spent.deliveries > 0, let backlog = sessions[key.session]?.backlog, backlog > configuration.backlogHighWater {
            // In proportion to how far past the mark, the whole pause at twice the mark: the
            // flood settles where the reader keeps pace, rather than stopping and starting.
            let past = min(1, (backlog - configuration.backlogHighWater) / configuration.backlogHighWater)
            wait = max(wait, Int64(Double(configuration.backlogPause.nanoseconds) * past))
        }
        if wait > 0, let session = sessions[key.session], let own = session.participants[key.participant]?.fanoutMeter.level(at: now) {
            let largest = session.participants.values.reduce(0) { max($0, $1.fanoutMeter.level(at: now)) }
            let pause = largest > 0 ? Double(wait) * own / largest : 0
            if pause >= 1_000_000 { until = now + Int64(pause) }
        }
        if let source {
            if spent.deliveries > 0 {
                if sourceFanout[source] == nil {
                    sourceFanout[source] = FanoutBudget(
                        deliveriesPerSecond: configuration.fanoutDeliveriesPerSecondPerSource,
                        bytesPerSecond: configuration.fanoutBytesPerSecondPerSource, burstSeconds: configuration.fanoutBurst, now: now)
                }
                sourceFanout[source]?.spend(deliveries: spent.deliveries, bytes: spent.bytes, at: now)
            }
            if let sourceUntil = sourceFanout[source]?.pausedUntil(at: now) { until = max(until ?? sourceUntil, sourceUntil) }
        }
        return until
    }
}
