/// A session's fan-out allowance on injected time: deliveries and bytes per second, spent as
/// frames go out and allowed to run into debt, so that nothing already accepted is dropped.
/// While in debt the relay stops reading whoever sends into the session, until the debt is
/// paid back at the refill rate.
struct FanoutBudget: Sendable, Hashable {
    private var deliveries: Double
    private var bytes: Double
    private var updated: Int64
    private let deliveryRate: Double
    private let byteRate: Double
    private let burst: Double

    /// A full allowance at `now`.
    init(deliveriesPerSecond: Double, bytesPerSecond: Double, burstSeconds: Double, now: Int64) {
        deliveryRate = max(1, deliveriesPerSecond)
        byteRate = max(1, bytesPerSecond)
        burst = max(0.001, burstSeconds)
        deliveries = deliveryRate * burst
        bytes = byteRate * burst
        updated = now
    }

    /// Spends `count` deliveries of `size` bytes in all at `now`.
    mutating func spend(deliveries count: Int, bytes size: Int, at now: Int64) {
        refill(at: now)
        deliveries -= Double(count)
        bytes -= Double(size)
    }

    /// When the allowance is out of debt again; nil when it is not in debt at `now`.
    mutating func pausedUntil(at now: Int64) -> Int64? {
        refill(at: now)
        let seconds = max(-deliveries / deliveryRate, -bytes / byteRate)
        guard seconds > 0 else { return nil }
        return now + Int64(min(seconds, 60) * 1e9) + 1
    }

    private mutating func refill(at now: Int64) {
        guard now > updated else { return }
        let elapsed = Double(now - updated) / 1e9
        deliveries = min(deliveryRate * burst, deliveries + elapsed * deliveryRate)
        bytes = min(byteRate * burst, bytes + elapsed * byteRate)
        updated = now
    }
}
