import TandemClock
import TandemPlayback
import TandemPlayerSupport

/// The benchmarking baseline (`Options.following = .onReceipt`): mpv applies each change of the
/// group's timeline once, immediately, when its command arrives, and nothing corrects it
/// afterwards: no waiting for the change's instant, no nudges, no corrective seeks. This is how
/// most watch-together tools behave (a peer's "play from 12:03" is carried out when it lands),
/// and what the benchmarks compare the scheduled, corrected player with. `ReceiptFollower`
/// decides; the readings of mpv's position are logged all the same.
extension MpvPlayer {
    func carryOutOnReceipt(_ command: PlaybackCommand, rejoin: Bool) async {
        // A timeline that took effect before its command was issued (a late joiner's history, or
        // a change that reached us late) is taken up where the group is now: the baseline's most
        // favourable case. A change still to come is applied at once, early. The command tells
        // which: the baseline asks the coordinator nothing.
        let now = HostInstant(nanoseconds: MonotonicClock.now())
        let directive = state.withLock { $0.receipts.receive(command, now: now, rejoin: rejoin) }
        switch directive {
        case nil:
            // Seek and buffer commands: the play or pause that follows carries the change.
            return
        case .pause(let position)?:
            state.withLock { $0.groupRate = 0 }
            await setPaused(true)
            await seekWhilePaused(to: position)
        case .play(let start, let rate, let always)?:
            state.withLock { $0.groupRate = rate }
            await setSpeed(rate)
            let position = await measurePosition()?.position
            var sent: SentSeek?
            if always || position.map({ $0.saturatingDistance(to: start) > frameDuration }) ?? true {
                sent = await sendSeek(to: start)
            }
            // At once, seek or no seek: mpv starts from the target as soon as the seek lands.
            await setPaused(false)
            if let sent { await waitForLanding(sent, learning: false) }
        }
    }
}
