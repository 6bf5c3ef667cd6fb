import Foundation

/// `showNotice(_:)`: SharePlay's notices, shown on this participant's device only. SharePlay's
/// system UI shows them; here the readers of `notices` do (a terminal's status line, a player's
/// on-screen display), and nothing is sent to the group.
extension GroupSession {
    /// Shows `event` to this participant, as SharePlay's `showNotice(_:)`: every reader of
    /// `notices` hears it; it is not forwarded to other participants. After the session is
    /// invalidated it does nothing.
    public func showNotice(_ event: GroupSessionEvent) {
        onLoop { [self] in
            guard !machine.isInvalidated else { return }
            for reader in readers.notices.values { reader.yield(event) }
        }
    }

    /// Shows `action` as this participant's own (`showNotice(.updatedQueue(.added(.song("…"))))`,
    /// as Apple's documentation writes it).
    public func showNotice(_ action: GroupSessionEvent.Action) {
        showNotice(GroupSessionEvent(originator: localParticipant, action: action, url: nil))
    }

    /// The notices shown from now on (`showNotice(_:)`), for whatever shows them here; one
    /// stream per reader, keeping the newest 64 when the reader falls behind, finished when the
    /// session is invalidated.
    public var notices: AsyncStream<GroupSessionEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: GroupSessionEvent.self, bufferingPolicy: .bufferingNewest(64))
        let id = readerID()
        addReader({ [self] in readers.notices[id] = continuation }, else: { continuation.finish() })
        continuation.onTermination = { [weak self] _ in
            self?.onLoop { [weak self] in _ = self?.readers.notices.removeValue(forKey: id) }
        }
        return stream
    }
}
