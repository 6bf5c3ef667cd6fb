import TandemClock
import TandemPlayback

/// The keys bound in mpv's window, and a person's change forwarded to a coordinator a program
/// drives the player from (`MpvMachine` decides what mpv's reports mean: `MpvPlayer+Shell.swift`).
extension MpvPlayer {
    /// What a key bound in mpv's window does for the group (the word its `script-message` carries).
    enum GroupKey: String, CaseIterable {
        /// The queue's next item.
        case next
        /// The queue's previous item.
        case previous
        /// The rate 0.1 lower.
        case slower
        /// The rate 0.1 higher.
        case faster
        /// The rate back to 1.
        case resetRate = "reset-rate"
        /// Play or pause.
        case togglePause = "toggle-pause"
        /// 5 s back.
        case seekBack = "seek-back"
        /// 5 s on.
        case seekForward = "seek-forward"
        /// 30 s back.
        case seekBackFar = "seek-back-far"
        /// 30 s on.
        case seekForwardFar = "seek-forward-far"

        /// The key as the machine's decisions know it.
        var machineKey: MpvMachine.Key {
            switch self {
            case .next: .next
            case .previous: .previous
            case .slower: .slower
            case .faster: .faster
            case .resetRate: .resetRate
            case .togglePause: .togglePause
            case .seekBack: .seek(by: .seconds(-5))
            case .seekForward: .seek(by: .seconds(5))
            case .seekBackFar: .seek(by: .seconds(-30))
            case .seekForwardFar: .seek(by: .seconds(30))
            }
        }
    }

    /// The first word of the `script-message` that the keys bound in mpv send.
    static let groupKeyTarget = "tandem-key"

    /// The keys bound in mpv's window, with the terminal's meanings (the one key table): space
    /// and `p` play or pause, ← and → seek 5 s (with shift 30 s), `>` and Enter the next item, `<`
    /// the previous one, `[` and `]` the rate 0.1 slower and faster (mpv's own multiply it by 0.91
    /// and 1.1), Backspace the rate back to 1. Each is proposed to the group and takes effect in
    /// this mpv at the group's instant, as in every other participant, rather than in this mpv at
    /// once and in the others a lead later. mpv keeps its other keys (↑ and ↓ seek a minute);
    /// what they change, as what another tool changes over mpv's IPC, moves this mpv at once and
    /// is proposed to the group as a person's change.
    static let groupKeys: [(key: String, action: GroupKey)] = [(">", .next), ("ENTER", .next), ("<", .previous),
                                                               ("[", .slower), ("]", .faster), ("BS", .resetRate),
                                                               ("SPACE", .togglePause), ("p", .togglePause),
                                                               ("LEFT", .seekBack), ("RIGHT", .seekForward),
                                                               ("Shift+LEFT", .seekBackFar), ("Shift+RIGHT", .seekForwardFar)]

    /// Binds `groupKeys` in mpv (`keybind`, mpv 0.35's IPC command), each to a `script-message`
    /// that `handle(_:)` takes up; a refusal leaves mpv's own binding.
    static func bindQueueKeys(_ ipc: MpvConnection) async {
        for (key, action) in groupKeys {
            _ = try? await ipc.command(["keybind", .string(key), .string("script-message \(groupKeyTarget) \(action.rawValue)")])
        }
    }

    /// Does what `key`, pressed in mpv's window, asks of the group (`MpvMachine.proposal(for:…)`
    /// decides what); a change the group refuses (the first item has no previous one) changes
    /// nothing. Not coordinated, the transport keys do to mpv what mpv's own would.
    func take(_ key: GroupKey) {
        let coordinator = groupCoordinator
        guard coordinator.isCoordinating else {
            switch key.machineKey {
            case .togglePause: connection.send(["cycle", "pause"]) { _ in }
            case .seek(let by): connection.send(["seek", .number(by.seconds), "relative"]) { _ in }
            default: break
            }
            return
        }
        let now = HostInstant.now()
        let core = coordinator.core
        let position = coordinator.expectedItemTime(atHostTime: now) ?? core.timeline.anchorMediaTime
        let range = core.mediaTimeRange(ofItem: core.timeline.item)
        let proposal: @Sendable () throws -> Void
        switch MpvMachine.proposal(for: key.machineKey, rate: core.timeline.rate, intendedRate: core.intendedRate, position: position,
                                   duration: range.upperBound - .zero) {
        case .rate(let rate): proposal = { _ = try coordinator.proposeRateChange(to: rate) }
        case .seek(let target): proposal = { _ = try coordinator.proposeSeek(to: target) }
        case .next: proposal = { _ = try coordinator.advanceToNextItem() }
        case .previous: proposal = { _ = try coordinator.returnToPreviousItem() }
        }
        if let gate = options.proposalGate { try? gate(proposal) } else { try? proposal() }
    }

    /// The rate a rate key sets: `rate` changed by `step`, kept within the proposable rates and
    /// rounded to a tenth (so that 0.3 is the lowest a key reaches, 4 the highest); mpv's
    /// window's keys and the terminal's alike.
    public static func steppedRate(from rate: Double, by step: Double) -> Double {
        ((step < 0 ? max(MpvMachine.proposableRates.lowerBound, rate + step) : min(MpvMachine.proposableRates.upperBound, rate + step)) * 10).rounded() / 10
    }

    /// A person's change when a program drives the player's transport from a coordinator of
    /// its own (`readingsCoordinator`: the benchmark's apply-on-receipt baseline, where the
    /// player's own coordinator is not coordinating): proposed to that coordinator as it is,
    /// with no hold, since that program applies every change, this participant's own included,
    /// as it arrives. mpv has already done what the person asked.
    func forward(_ action: MpvRequestLedger.UserAction) {
        guard let driver = readingsCoordinator else { return }
        do {
            switch action {
            case .setPaused(true):
                guard driver.timeline.rate > 0 else { return }
                try driver.proposeRateChange(to: 0)
            case .setPaused(false):
                guard driver.timeline.rate == 0 else { return }
                try driver.proposeRateChange(to: MpvMachine.proposable(state.withLock { $0.machine.ledger.speed }))
            case .setSpeed(let speed):
                // Only while playing: a rate while paused would start everyone.
                guard driver.timeline.rate > 0 else { return }
                try driver.proposeRateChange(to: MpvMachine.proposable(speed))
            case .seek(let position):
                try driver.proposeSeek(to: Self.seekTarget(position, on: driver))
            }
        } catch {
            return
        }
        state.withLock { $0.machine.statistics.userProposals += 1 }
    }

    /// Where a person's seek to `position` (ns) is proposed: within the item as `coordinator`'s
    /// group knows it (its announced duration is rounded to the ms).
    private static func seekTarget(_ position: Int64, on coordinator: PlaybackCoordinator) -> ItemTime {
        let core = coordinator.core
        return ItemTime(nanoseconds: position).clamped(to: core.mediaTimeRange(ofItem: core.timeline.item))
    }
}
