import Foundation
import TandemNet
import TandemWire

extension BodySealer {
    /// Learns older epochs' keys from the epoch-history records (`RoleChange.epochHistory`) in
    /// `history` that open, for a joiner whose invite holds a newer epoch's secret than some of
    /// the history (and the activity, sealed when the session began): the records under keys it
    /// holds are looked at, newest keys first learned, while an epoch below the newest it holds
    /// is missing and a record it has not looked at opens (a history carries the newest
    /// `RoleRecord.maximumHistorySecrets` older keys, so the older ones come from an older
    /// epoch's history, opened with a key learned from a newer one). Nothing else is read or
    /// changed (no replay window moves), so the history is then taken in order, with every key
    /// found, as any other joiner's.
    func learnEpochs(from history: [OrderedDelivery]) {
        var looked = Set<Int>()
        while let newest = secrets.keys.max(), secrets.count <= Int(newest) {
            let known = secrets
            let candidates = history.indices.filter { index in
                !looked.contains(index) && Sealer.epoch(of: history[index].body).map { known[$0] != nil } == true
            }
            guard !candidates.isEmpty else { return }
            for index in candidates {
                looked.insert(index)
                let delivery = history[index]
                let expected = Expectation(path: .ordered, kinds: [.roles], sender: delivery.sender, attachment: nil,
                                           checksReplay: false, retention: delivery.retention)
                guard case .success(let body) = verify(delivery.body, expecting: expected),
                      case .epochHistory(let secrets)? = RoleRecord.decode(body.payload) else { continue }
                for (epoch, secret) in secrets { learn(secret, epoch: epoch) }
            }
        }
    }
}
