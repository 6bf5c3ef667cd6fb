import Foundation
import Tandem
import TandemPlayback

/// Notices and the group's rules: what this participant's program shows it
/// (`GroupSession.showNotice(_:)`) reported as `notice` events, which a front shows where people
/// look (a line at the terminal, mpv's screen) and sends to nobody else; and the host's rules for
/// the group, proposed once it coordinates.
extension WatchParty {
    /// The work that reports the session's notices as `notice` events, the originator named as
    /// the status line names everyone, to run for as long as the watch lasts; heard from now on.
    func followNotices() -> @Sendable () async -> Void {
        let notices = session.notices
        return { [self] in
            for await notice in notices {
                emit(.notice(.init(notice, name: name(of: notice.originator.id))))
            }
        }
    }

    /// The host's rules for the group, proposed to it once `coordinator` coordinates: the cap on
    /// every suspension's hold (`Configuration.maximumHold`). A joiner proposes nothing: it finds
    /// them in the group's history.
    func proposeHostRules(on coordinator: PlaybackCoordinator) {
        guard configuration.isHost, let cap = configuration.maximumHold else { return }
        coordinator.maximumHold = cap
    }
}
