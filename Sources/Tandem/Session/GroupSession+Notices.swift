import Foundation

/// `showNotice(_:)`: SharePlay's notices, shown on this participant's device only. SharePlay's
/// system UI shows them; here the readers of `notices` do (a terminal's status line, a player's
/// on-screen display), and nothing is sent to the group.
extension GroupSession {
    /// Shows `event` to this participant, as SharePlay's `showNotice(_:)`: every reader of
    /// `notices` hears it; it is not forwarded to other participants. After the session is
    /// invalidated it does nothing.
    public func showNotice(_ event: GroupSessionEvent) {
        let readers = core.withLock { core in core.invalidated ? [] : Array(core.noticeReaders.values) }
        for reader in readers { reader.yield(event) }
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
        let id = core.withLock { core -> Int? in
            guard !core.invalidated else { return nil }
            let id = core.nextSubscriber
            core.nextSubscriber += 1
            core.noticeReaders[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.core.withLock { $0.noticeReaders.removeValue(forKey: id) }
        }
        return stream
    }

    /// Ends the readers of `notices`.
    func finishNotices() {
        let readers = core.withLock { core in
            defer { core.noticeReaders.removeAll() }
            return Array(core.noticeReaders.values)
        }
        for reader in readers { reader.finish() }
    }
}
