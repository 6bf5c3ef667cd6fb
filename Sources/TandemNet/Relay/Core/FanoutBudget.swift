/// A session's fan-out allowance on injected time: deliveries and bytes per second, spent as
/// frames go out and allowed to run into debt, so that nothing already accepted is dropped.
/// While in debt the relay stops reading those who made the debt, each in proportion to its
/// part of it (`FanoutMeter`), until the debt is paid back at the refill rate.
struct FanoutBudget: Sendable {
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

    /// The deliveries and bytes spent so far, in all: what a frame spent is the difference.
    private(set) var spent: (deliveries: Int, bytes: Int) = (0, 0)

    /// What `deliveries` deliveries of `bytes` bytes in all cost, in seconds of the allowance
    /// (each at its rate, the larger of the two).
    func seconds(deliveries: Int, bytes: Int) -> Double {
        max(Double(deliveries) / deliveryRate, Double(bytes) / byteRate)
    }

    /// Spends `count` deliveries of `size` bytes in all at `now`.
    mutating func spend(deliveries count: Int, bytes size: Int, at now: Int64) {
        refill(at: now)
        deliveries -= Double(count)
        bytes -= Double(size)
        spent = (spent.deliveries + count, spent.bytes + size)
    }

    /// Whether the allowance is whole again at `now`: one that is can be forgotten and made anew.
    func isFull(at now: Int64) -> Bool {
        let elapsed = Double(max(now - updated, 0)) / 1e9
        return deliveries + elapsed * deliveryRate >= deliveryRate * burst && bytes + elapsed * byteRate >= byteRate * burst
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
