/// Fits offset and drift to the lower envelopes of the two one-way delays.
///
/// Every exchange gives two one-way measurements: `forward = T2 − T1 = a + θ` and
/// `backward = T4 − T3 = b − θ`, where `a` and `b` are the legs' true delays and `θ` the offset
/// (a line in local time when the clock drifts). Queueing only ever adds delay, so the samples of
/// each direction lie above a line whose slope is the drift; the fastest trips touch it. We find
/// the common slope whose two supporting lines leave the least total gap above them (the linear
/// program of Moon, Skelly and Towsley, "Estimation and removal of clock skew from network delay
/// measurements", INFOCOM 1999, applied to both directions at once), then take `θ` halfway between
/// the two lines. Unlike choosing the single exchange with the lowest round trip, the fastest
/// forward trip and the fastest backward trip may come from different exchanges, so the error
/// shrinks roughly as 1/n instead of 1/√n under random queueing.
struct EnvelopeFit {
    /// The window, relative to a reference time and a base offset so that `Double` keeps
    /// sub-nanosecond precision with offsets of days.
    private let forwardTimes: [Double]
    private let forwardDelays: [Double]
    private let backwardTimes: [Double]
    private let backwardDelays: [Double]

    init(samples: [ClockSample], referenceTime: Int64, baseOffset: Int64) {
        forwardTimes = samples.map { Double($0.clientSendTime - referenceTime) }
        forwardDelays = samples.map { Double($0.serverReceiveTime - $0.clientSendTime - baseOffset) }
        backwardTimes = samples.map { Double($0.clientReceiveTime - referenceTime) }
        backwardDelays = samples.map { Double($0.clientReceiveTime - $0.serverSendTime + baseOffset) }
    }

    /// The fitted offset at the reference time (relative to the base offset), the drift, and the
    /// typical distance of the nearest non-supporting samples from the envelopes.
    func fit(estimatingDrift: Bool, priorDrift: Double, maximumDrift: Double) -> (offset: Double, drift: Double, spread: Double) {
        let drift = estimatingDrift ? bestDrift(maximumDrift: maximumDrift) : priorDrift
        let forwardFloor = floor(times: forwardTimes, delays: forwardDelays, slope: drift)
        let backwardFloor = floor(times: backwardTimes, delays: backwardDelays, slope: -drift)
        let offset = (forwardFloor - backwardFloor) / 2
        let spread = (thirdGap(times: forwardTimes, delays: forwardDelays, slope: drift, floor: forwardFloor)
            + thirdGap(times: backwardTimes, delays: backwardDelays, slope: -drift, floor: backwardFloor)) / 2
        return (offset, drift, spread)
    }

    /// The intercept of the highest line of the given slope that no sample lies below.
    private func floor(times: [Double], delays: [Double], slope: Double) -> Double {
        var lowest = Double.infinity
        for index in times.indices {
            lowest = min(lowest, delays[index] - slope * times[index])
        }
        return lowest
    }

    /// The third-smallest gap above the supporting line. The two smallest are the samples the line
    /// rests on (zero); the third tells how densely samples crowd the true floor, hence how far
    /// above it the supporting line may sit.
    private func thirdGap(times: [Double], delays: [Double], slope: Double, floor: Double) -> Double {
        var gaps = times.indices.map { delays[$0] - slope * times[$0] - floor }
        guard gaps.count >= 3 else { return .infinity }
        gaps.sort()
        return gaps[2]
    }

    /// The slope that maximises the sum of both intercepts minus the mean-time correction, which
    /// is the same as minimising the total gap; the objective is concave, so a ternary search finds
    /// its maximum.
    private func bestDrift(maximumDrift: Double) -> Double {
        let meanForwardTime = forwardTimes.reduce(0, +) / Double(forwardTimes.count)
        let meanBackwardTime = backwardTimes.reduce(0, +) / Double(backwardTimes.count)
        func tightness(_ slope: Double) -> Double {
            floor(times: forwardTimes, delays: forwardDelays, slope: slope)
                + floor(times: backwardTimes, delays: backwardDelays, slope: -slope)
                + slope * (meanForwardTime - meanBackwardTime)
        }
        var low = -maximumDrift
        var high = maximumDrift
        // 80 rounds narrow ±1000 ppm to below 1e-16: far finer than any clock's drift.
        for _ in 0..<80 {
            let left = low + (high - low) / 3
            let right = high - (high - low) / 3
            if tightness(left) < tightness(right) { low = left } else { high = right }
        }
        return (low + high) / 2
    }
}
