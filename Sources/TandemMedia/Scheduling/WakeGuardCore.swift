import TandemClock

/// When to keep this machine's processors awake ahead of presentation deadlines: the pure core
/// of `WakeGuard`, on whatever clock its caller reads (monotonic nanoseconds in the shell, a
/// number in tests).
///
/// **Why.** A thread whose timer falls due on an idle processor wakes when that processor does.
/// On bare metal that takes microseconds. On a virtual machine an idle processor halts, the
/// hypervisor takes its thread off the host's processor, and it runs again when the host gets to
/// it: on this project's two-processor machines, 0.7 to 3 ms late, about once in a hundred
/// waits. With every processor kept busy over the last 2 ms before each frame, four players in
/// `tandem bench cluster --players` had about half as many frames shown more than 0.5 ms apart
/// (docs/BENCHMARKS.md's table).
///
/// **What.** A presentation thread asks for a window before each deadline (`cover`); while the
/// guard is engaged, the shell's warmers (one per processor, at idle priority, so that they only
/// fill time nothing else wants) spin through each window. The guard engages when a
/// presentation thread's wait is seen to wake more than `lateWake` after its deadline (`woke`),
/// and disengages after `hold` with no such wake: a machine whose processors wake promptly never
/// pays for it. A player asks for it (`HeadlessPlayer.Options.wakeGuard`, off by default: on a
/// saturated machine it was seen to cost more than it saves, as docs/BENCHMARKS.md says).
struct WakeGuardCore: Sendable {
    /// The guard's constants.
    struct Configuration: Sendable {
        /// How long before each deadline the processors are kept awake.
        var lead: Int64 = 2_000_000
        /// A wait that wakes later than this after its deadline engages the guard.
        var lateWake: Int64 = 300_000
        /// How long the guard stays engaged after the last late wake. Long, as once engaged the
        /// presentation threads' waits no longer wake late: each time it lets go costs a late
        /// frame or so before it engages again.
        var hold: Int64 = 300_000_000_000
        /// At most this many windows are kept (the earliest); a later one beyond is not covered.
        var windowLimit = 64
    }

    /// What a warmer does next.
    enum Step: Equatable, Sendable {
        /// Nothing to cover: wait until told of a window.
        case idle
        /// Wait until this instant, when the earliest window opens (or until told of an earlier one).
        case wait(until: Int64)
        /// Spin until this instant, the end of the window open now.
        case spin(until: Int64)
    }

    let configuration: Configuration
    /// The windows to cover, by start; none overlaps or touches another (they are merged).
    private(set) var windows: [Range<Int64>] = []
    /// When a wait last woke late, if it ever did.
    private(set) var lastLateWake: Int64?

    init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Whether the processors are kept awake before deadlines at `now`.
    func isEngaged(at now: Int64) -> Bool {
        guard let lastLateWake else { return false }
        return now - lastLateWake < configuration.hold
    }

    /// A wait for `deadline` returned at `now`; returns whether that engaged a guard that was not
    /// engaged. A wait that returned early (woken, not timed out) says nothing.
    mutating func woke(deadline: Int64, at now: Int64) -> Bool {
        guard now - deadline > configuration.lateWake else { return false }
        let engaged = isEngaged(at: now)
        lastLateWake = now
        return !engaged
    }

    /// A presentation deadline at `deadline`: while engaged, the `lead` before it is covered.
    /// Returns whether the warmers must look again (the window opens before any they knew of).
    mutating func cover(deadline: Int64, at now: Int64) -> Bool {
        dropEnded(at: now)
        guard isEngaged(at: now), deadline > now else { return false }
        let window = max(now, deadline - configuration.lead)..<deadline
        let earliest = windows.first?.lowerBound
        // Merged with every window it overlaps or touches; the rest keep their order.
        var merged = window
        var kept: [Range<Int64>] = []
        kept.reserveCapacity(windows.count + 1)
        for existing in windows {
            if existing.upperBound < merged.lowerBound || existing.lowerBound > merged.upperBound {
                kept.append(existing)
            } else {
                merged = min(existing.lowerBound, merged.lowerBound)..<max(existing.upperBound, merged.upperBound)
            }
        }
        let index = kept.firstIndex { $0.lowerBound > merged.lowerBound } ?? kept.endIndex
        guard index < configuration.windowLimit else { return false }
        kept.insert(merged, at: index)
        windows = Array(kept.prefix(configuration.windowLimit))
        return earliest.map { merged.lowerBound < $0 } ?? true
    }

    /// What a warmer does at `now`.
    mutating func next(at now: Int64) -> Step {
        dropEnded(at: now)
        guard isEngaged(at: now), let first = windows.first else { return .idle }
        return first.lowerBound <= now ? .spin(until: first.upperBound) : .wait(until: first.lowerBound)
    }

    private mutating func dropEnded(at now: Int64) {
        if let index = windows.firstIndex(where: { $0.upperBound > now }) {
            if index > 0 { windows.removeFirst(index) }
        } else {
            windows.removeAll()
        }
    }
}

/// Whether one warmer spins through the next window: the pure part of a warmer, beside
/// `WakeGuardCore`'s shared windows.
///
/// A warmer that got less than half of a window's time was on a processor busy with other work,
/// one that does not halt and whose threads it would only cost switches: it leaves that
/// processor alone for `pause`, then tries a window again.
struct WarmerBackoff: Sendable {
    /// How long a warmer that found its processor busy leaves it alone.
    var pause: Int64 = 1_000_000_000
    /// Windows shorter than this say nothing (too short to tell a busy processor by).
    var shortest: Int64 = 500_000
    /// Until when this warmer does not spin.
    private(set) var restingUntil: Int64?

    /// Whether to spin through a window open at `now`.
    func spins(at now: Int64) -> Bool {
        restingUntil.map { now >= $0 } ?? true
    }

    /// A window of `span` was spun through, of which the warmer ran `ran` (its own processor
    /// time), ending at `now`.
    mutating func spun(span: Int64, ran: Int64, at now: Int64) {
        guard span >= shortest else { return }
        restingUntil = ran * 2 < span ? now + pause : nil
    }
}

