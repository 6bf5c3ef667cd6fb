import Foundation

extension GroupSession {
    /// The bodies dropped on arrival from now on (forged, replayed, re-routed, re-attributed or
    /// unreadable), one element each, until the session is invalidated. Each reader gets its own
    /// sequence.
    public var rejections: AsyncStream<Rejection> {
        let (stream, continuation) = AsyncStream.makeStream(of: Rejection.self, bufferingPolicy: .bufferingNewest(256))
        let id = core.withLock { core -> Int? in
            guard !core.invalidated else { return nil }
            let id = core.nextSubscriber
            core.nextSubscriber += 1
            core.rejectionReaders[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.core.withLock { $0.rejectionReaders.removeValue(forKey: id) }
        }
        return stream
    }

    /// How many bodies have been dropped on arrival so far, by reason.
    public var rejectionCounts: [RejectionReason: Int] { core.withLock { $0.rejected } }

    /// Counts a dropped body and tells the readers of `rejections`.
    func reject(_ rejection: Rejection) {
        let readers = core.withLock { core -> [AsyncStream<Rejection>.Continuation] in
            core.rejected[rejection.reason, default: 0] += 1
            return Array(core.rejectionReaders.values)
        }
        for reader in readers { reader.yield(rejection) }
    }

    /// Ends the readers of `rejections`.
    func finishRejections() {
        let readers = core.withLock { core in
            defer { core.rejectionReaders.removeAll() }
            return Array(core.rejectionReaders.values)
        }
        for reader in readers { reader.finish() }
    }
}
