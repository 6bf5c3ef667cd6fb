import Foundation

/// Admission proofs shared fairly: each costs the relay two signature checks, so a source, its
/// wider prefix and the relay as a whole each have a rate of them, and past the relay's, the
/// sources asking share its burst (max-min: one below its share is still checked).
extension RelayCore {
    /// Pays for one admission proof from `source` at `now`: from its own bucket and its wider
    /// prefix's (which many /64s of one network share), then from the relay's. False when either
    /// of its own is empty, or when the relay's is and the source has used its fair share of the
    /// relay's burst (the burst divided among the sources that asked lately) or more.
    mutating func takeProof(from source: RelaySource, at now: Int64) -> Bool {
        let rate = configuration.proofsPerSecondPerSource
        let burst = max(configuration.proofBurstPerSource, 1)
        var keys = [(source.key, rate, burst)]
        if let wider = source.wider { keys.append((wider, rate * 4, burst * 4)) }
        for (key, rate, capacity) in keys {
            var bucket = proofBuckets[key] ?? TokenBucket(rate: rate, capacity: capacity, now: now)
            guard bucket.take(1, at: now) else {
                proofBuckets[key] = bucket
                return false
            }
            proofBuckets[key] = bucket
        }
        let relayRate = max(configuration.proofsPerSecond, 1)
        var relay = relayProofBucket ?? TokenBucket(rate: relayRate, capacity: 2 * relayRate, now: now)
        defer { relayProofBucket = relay }
        if relay.take(1, at: now) { return true }
        // The relay is at its limit: a source below its fair share is still checked.
        let asking = proofBuckets.keys.count { !$0.hasSuffix("/48") }
        let share = relay.capacity / Double(max(asking, 1))
        // What it had used before this proof, which its bucket has paid for already.
        let used = burst - (proofBuckets[source.key]?.available(at: now) ?? burst) - 1
        return used < share
    }

    /// Forgets the proof buckets that are full again at `now`: they would be made the same.
    mutating func forgetIdleProofBuckets(at now: Int64) {
        proofBuckets = proofBuckets.filter { !$0.value.isFull(at: now) }
    }
}
