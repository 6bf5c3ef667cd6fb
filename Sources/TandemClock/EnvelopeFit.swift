/// Fits offset and drift to the lower envelopes of the two one-way delays.
///
/// Every exchange gives two one-way measurements: `forward = T2 − T1 = a + θ` and
/// `backward = T4 − T3 = b − θ`, where `a` and `b` are the legs' true delays and `θ` the offset
/// (a line in local time when the clock drifts). Queueing only ever adds delay, so the samples of
/// each direction lie above a line whose slope is the drift; the fastest trips touch it. We find
/// each direction's supporting line by the linear program of Moon, Skelly and Towsley ("Estimation
/// and removal of clock skew from network delay measurements", INFOCOM 1999), average their
/// slopes, and take `θ` halfway between the two lines of that common slope. Unlike choosing the single exchange with the lowest round trip, the fastest
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
    func fit(estimatingDrift: Bool, priorDrift: Double, maximumDrift: Double) -> (offset: Double, drift: Double, spread: Double, driftUncertainty: Double) {
        var drift = priorDrift
        var driftUncertainty = 0.0
        if estimatingDrift {
            let forward = supportingSlope(times: forwardTimes, delays: forwardDelays, limit: maximumDrift)
            let backward = supportingSlope(times: backwardTimes, delays: backwardDelays, limit: maximumDrift)
            // The forward floor rises with the offset and the backward floor falls with it.
            let measured = (forward - backward) / 2
            // What the two slopes fail to share is noise; so is a supporting line's height error
            // spread across half the window. Either tells how well the drift is known.
            let span = (forwardTimes.max() ?? 0) - (forwardTimes.min() ?? 0)
            let floorSpread = (thirdGap(times: forwardTimes, delays: forwardDelays, slope: forward)
                + thirdGap(times: backwardTimes, delays: backwardDelays, slope: backward)) / 2
            driftUncertainty = max(abs(forward + backward) / 2, span > 0 ? 2 * floorSpread / span : maximumDrift)
            // Shrink a drift that the noise could explain towards zero (a Wiener-style weight), so
            // that a short or noisy window does not tilt the line and throw the present off.
            let signal = measured * measured
            drift = signal + driftUncertainty * driftUncertainty > 0
                ? measured * signal / (signal + driftUncertainty * driftUncertainty) : 0
        }
        let forwardFloor = floor(times: forwardTimes, delays: forwardDelays, slope: drift)
        let backwardFloor = floor(times: backwardTimes, delays: backwardDelays, slope: -drift)
        let offset = (forwardFloor - backwardFloor) / 2
        let spread = (thirdGap(times: forwardTimes, delays: forwardDelays, slope: drift)
            + thirdGap(times: backwardTimes, delays: backwardDelays, slope: -drift)) / 2
        return (offset, drift, spread, driftUncertainty)
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
    private func thirdGap(times: [Double], delays: [Double], slope: Double) -> Double {
        let floor = floor(times: times, delays: delays, slope: slope)
        var gaps = times.indices.map { delays[$0] - slope * times[$0] - floor }
        guard gaps.count >= 3 else { return .infinity }
        gaps.sort()
        return gaps[2]
    }

    /// Moon, Skelly and Towsley's linear program for one direction: maximise the supporting line's
    /// height at the samples' mean time, which is the same as leaving the least total gap above it.
    /// The directions are fitted separately because the sum of a forward and a backward line has
    /// slope zero whatever the drift, so a joint fit would have no pivot and would tilt with the
    /// noise at the window's end. The objective is concave in the slope, so a ternary search finds
    /// its maximum.
    private func supportingSlope(times: [Double], delays: [Double], limit: Double) -> Double {
        let meanTime = times.reduce(0, +) / Double(times.count)
        func height(_ slope: Double) -> Double {
            floor(times: times, delays: delays, slope: slope) + slope * meanTime
        }
        var low = -limit
        var high = limit
        // 80 rounds narrow ±1000 ppm to below 1e-16: far finer than any clock's drift.
        for _ in 0..<80 {
            let left = low + (high - low) / 3
            let right = high - (high - low) / 3
            if height(left) < height(right) { low = left } else { high = right }
        }
        return (low + high) / 2
    }
}
