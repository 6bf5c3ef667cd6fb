import Foundation

/// What one sender has spent of its session's fan-out lately: a level that decays by half every
/// `halfLife`, on injected time. When the session's allowance is in debt, each sender is paused
/// in proportion to its level against the largest in the session, so that the debt pauses
/// those who made it and a participant that sends little (acknowledgements, a proposal now and
/// then) is not held behind another's bulk.
struct FanoutMeter: Sendable, Hashable {
    /// How long the level takes to halve.
    static let halfLife: Int64 = 1_000_000_000

    private var level: Double = 0
    private var updated: Int64 = 0

    /// A meter that has spent nothing.
    init() {}

    /// The level at `now`.
    func level(at now: Int64) -> Double {
        guard level > 0, now > updated else { return level }
        return level * pow(0.5, Double(now - updated) / Double(FanoutMeter.halfLife))
    }

    /// Adds `amount` (seconds of the session's allowance) spent at `now`.
    mutating func add(_ amount: Double, at now: Int64) {
        level = level(at: now) + amount
        updated = max(updated, now)
    }
}
