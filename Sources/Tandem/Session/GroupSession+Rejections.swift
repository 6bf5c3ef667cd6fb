import Foundation

extension GroupSession {
    /// The bodies dropped on arrival from now on (forged, replayed, re-routed, re-attributed or
    /// unreadable), one element each, until the session is invalidated. Each reader gets its own
    /// sequence.
    public var rejections: AsyncStream<Rejection> {
        let (stream, continuation) = AsyncStream.makeStream(of: Rejection.self, bufferingPolicy: .bufferingNewest(256))
        let id = readerID()
        addReader({ [self] in readers.rejections[id] = continuation }, else: { continuation.finish() })
        continuation.onTermination = { [weak self] _ in
            self?.onLoop { [weak self] in _ = self?.readers.rejections.removeValue(forKey: id) }
        }
        return stream
    }

    /// How many bodies have been dropped on arrival so far, by reason.
    public var rejectionCounts: [RejectionReason: Int] { view.withLock { $0.rejected } }

    /// Counts a body dropped outside the link's events (an attachment's data) and tells the
    /// readers of `rejections`. Any thread.
    func reject(_ rejection: Rejection) {
        onLoop { [self] in
            perform([machine.reject(rejection)])
            publishView()
        }
    }
}
