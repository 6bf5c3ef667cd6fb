/// Fits offset and drift to the lower envelopes of the two one-way delays.
///
/// Every exchange gives two one-way measurements: `forward = T2 − T1 = a + θ` and
/// `backward = T4 − T3 = b − θ`, where `a` and `b` are the legs' true delays and `θ` the offset
/// (a line in local time when the clock drifts). Queueing only ever adds delay, so the samples of
/// each direction lie above a line whose slope is the drift; the fastest trips touch it. We find
/// each direction's supporting line by the linear program of Moon, Skelly and Towsley ("Estimation
/// and removal of clock skew from network delay measurements", INFOCOM 1999), average their
/// slopes, and take `θ` halfway between the two lines of that common slope. Unlike choosing the
/// single exchange with the lowest round trip, the fastest forward trip and the fastest backward
/// trip may come from different exchanges, so the error shrinks roughly as 1/n instead of 1/√n
/// under random queueing.
///
struct EnvelopeFit {
    /// What the fit found; times relative to the reference time, offsets to the base offset.
    struct Result {
        /// The offset at the reference time.
        var offset: Double
        /// The drift (dimensionless).
        var drift: Double
        /// The estimated error of `offset`, in nanoseconds.
        var errorScale: Double
        /// The estimated error of `drift`.
        var driftUncertainty: Double
    }

    /// One direction's one-way delays against local time, relative to a reference time and a base
    /// offset so that `Double` keeps sub-nanosecond precision with offsets of days.
    private struct Envelope {
        var times: [Double]
        var delays: [Double]

        /// The intercept of the highest line of the given slope that no sample lies below.
        func floor(slope: Double) -> Double {
            var lowest = Double.infinity
            for index in times.indices { lowest = min(lowest, delays[index] - slope * times[index]) }
            return lowest
        }

        /// The samples the supporting line of this slope rests on, and the typical spacing of the
        /// samples nearest to it. Samples crowd a floor at a roughly even spacing in gap, so the
        /// eighth-nearest sits about eight spacings up; one spacing is about how far above the
        /// true floor the line itself may sit.
        func support(slope: Double) -> (indices: [Int], spacing: Double) {
            let floor = floor(slope: slope)
            let tolerance = 1e-6 * max(1, abs(floor))
            let rank = min(8, times.count - 1)
            var indices: [Int] = []
            // The rank + 1 smallest gaps, kept sorted; cheaper than sorting them all.
            var smallest: [Double] = []
            for index in times.indices {
                let gap = delays[index] - slope * times[index] - floor
                if gap <= tolerance { indices.append(index) }
                if smallest.count <= rank || gap < smallest[smallest.count - 1] {
                    let position = smallest.firstIndex { $0 > gap } ?? smallest.count
                    smallest.insert(gap, at: position)
                    if smallest.count > rank + 1 { smallest.removeLast() }
                }
            }
            let spacing = rank >= 2 ? smallest[rank] / Double(rank) : .infinity
            return (indices, spacing)
        }

        /// Moon, Skelly and Towsley's linear program: the slope whose supporting line sits highest at
        /// the samples' mean time, which is the same as leaving the least total gap above it. That
        /// line is the edge of the samples' lower convex hull above the mean time, so Andrew's
        /// monotone chain finds it in one pass over the samples sorted by time.
        func supportingSlope(limit: Double) -> Double {
            // Samples arrive nearly in time order (only reordered replies break it), so sort only
            // when needed.
            var order = Array(times.indices)
            if zip(times, times.dropFirst()).contains(where: { $0.0 > $0.1 }) {
                order.sort { (times[$0], delays[$0]) < (times[$1], delays[$1]) }
            }
            var hull: [Int] = []
            for index in order {
                if let last = hull.last, times[last] == times[index] {
                    // Same instant: only the lower sample can be on the lower hull.
                    if delays[index] >= delays[last] { continue }
                    hull.removeLast()
                }
                while hull.count >= 2, !turnsLeft(hull[hull.count - 2], hull[hull.count - 1], index) {
                    hull.removeLast()
                }
                hull.append(index)
            }
            guard hull.count >= 2 else { return 0 }
            let meanTime = times.reduce(0, +) / Double(times.count)
            var slope = edgeSlope(hull[hull.count - 2], hull[hull.count - 1])
            for edge in 0..<(hull.count - 1) where times[hull[edge + 1]] >= meanTime {
                slope = edgeSlope(hull[edge], hull[edge + 1])
                // On a vertex any slope between its two edges is optimal; take the middle one.
                if times[hull[edge + 1]] == meanTime, edge + 2 < hull.count {
                    slope = (slope + edgeSlope(hull[edge + 1], hull[edge + 2])) / 2
                }
                break
            }
            return min(max(slope, -limit), limit)
        }

        private func edgeSlope(_ from: Int, _ to: Int) -> Double {
            (delays[to] - delays[from]) / (times[to] - times[from])
        }

        private func turnsLeft(_ origin: Int, _ middle: Int, _ end: Int) -> Bool {
            let cross = (times[middle] - times[origin]) * (delays[end] - delays[origin])
                - (delays[middle] - delays[origin]) * (times[end] - times[origin])
            return cross > 0
        }

        /// The same samples without those at `indices`; unchanged if fewer than two would remain.
        func removing(_ indices: [Int]) -> Envelope {
            let dropped = Set(indices)
            let kept = times.indices.filter { !dropped.contains($0) }
            guard kept.count >= 2 else { return self }
            return Envelope(times: kept.map { times[$0] }, delays: kept.map { delays[$0] })
        }
    }

    private let forward: Envelope
    private let backward: Envelope

    init(samples: [ClockSample], referenceTime: Int64, baseOffset: Int64) {
        forward = Envelope(
            times: samples.map { Double($0.clientSendTime - referenceTime) },
            delays: samples.map { Double($0.serverReceiveTime - $0.clientSendTime - baseOffset) }
        )
        backward = Envelope(
            times: samples.map { Double($0.clientReceiveTime - referenceTime) },
            delays: samples.map { Double($0.clientReceiveTime - $0.serverSendTime + baseOffset) }
        )
    }

    /// Fits the window. Without `estimatingDrift` the drift is `priorDrift`, known to
    /// ±`maximumDrift`.
    func fit(estimatingDrift: Bool, priorDrift: Double, maximumDrift: Double) -> Result {
        var drift = priorDrift
        var driftUncertainty = maximumDrift
        let span = (forward.times.max() ?? 0) - (forward.times.min() ?? 0)
        if estimatingDrift, span > 0 {
            let forwardSlope = forward.supportingSlope(limit: maximumDrift)
            let backwardSlope = backward.supportingSlope(limit: maximumDrift)
            // The forward floor rises with the offset and the backward floor falls with it. Uneven
            // sampling biases both slopes alike, so it cancels here.
            let measured = (forwardSlope - backwardSlope) / 2
            // A line pivoting on the window's middle is given away by the first sample it cuts off;
            // with samples crowding the floor at some spacing, that happens when its ends move by
            // about that much: a slope error of a few spacings over the span. What the two
            // directions' slopes fail to share is noise too.
            let forwardSupport = forward.support(slope: forwardSlope)
            let backwardSupport = backward.support(slope: backwardSlope)
            let spacing = (forwardSupport.spacing + backwardSupport.spacing) / 2
            // When samples are bunched (a burst, then sparse polling) the spacing says too little;
            // so, as a jackknife would, refit without the samples each line rested on and see how
            // far the slope moves.
            let forwardShift = abs(forward.removing(forwardSupport.indices).supportingSlope(limit: maximumDrift) - forwardSlope)
            let backwardShift = abs(backward.removing(backwardSupport.indices).supportingSlope(limit: maximumDrift) - backwardSlope)
            driftUncertainty = max(4 * spacing / span, abs(forwardSlope + backwardSlope) / 2, (forwardShift + backwardShift) / 2)
            // Shrink a drift that the noise could explain towards zero (a Wiener-style weight), so
            // that a short or noisy window does not tilt the line and throw the present off.
            let signal = measured * measured
            let noise = driftUncertainty * driftUncertainty
            drift = signal + noise > 0 ? measured * signal / (signal + noise) : 0
        }
        let forwardSupport = forward.support(slope: drift)
        let backwardSupport = backward.support(slope: -drift)
        let offset = (forward.floor(slope: drift) - backward.floor(slope: -drift)) / 2
        // Each floor sits above the true one by about one spacing, more often less; three
        // spacings covers all but a few percent.
        let spread = 3 * (forwardSupport.spacing + backwardSupport.spacing) / 2
        // The floors rest on their support samples; a wrong drift is wrong by its error times the
        // distance from them to the reference time.
        let lever = (forwardSupport.indices.map { abs(forward.times[$0]) }.max() ?? 0)
            + (backwardSupport.indices.map { abs(backward.times[$0]) }.max() ?? 0)
        return Result(offset: offset, drift: drift, errorScale: spread + driftUncertainty * lever / 2,
                      driftUncertainty: driftUncertainty)
    }
}
