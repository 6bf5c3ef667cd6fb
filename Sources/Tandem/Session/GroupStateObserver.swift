/// Whether group activities are possible now, observable as on Apple platforms:
/// `for await eligible in observer.$isEligibleForGroupSession.values { ... }`.
///
/// It is true while a relay is configured and was reachable at the last attempt. (`@unchecked`
/// for the wrapper's storage alone: a `var`, as Swift requires of every property wrapper, that
/// holds a constant reference to storage that locks its own state.)
public final class GroupStateObserver: @unchecked Sendable {
    /// Whether a group session can be started or joined now.
    @Published public private(set) var isEligibleForGroupSession: Bool

    /// An observer of `center` (by default the shared one).
    public init(center: ActivityCenter = .shared) {
        _isEligibleForGroupSession = Published(storage: center.eligibility)
    }
}

extension Published {
    /// A property backed by existing storage, shared with its owner.
    init(storage: PublishedStorage<Value>) {
        self.storage = storage
    }
}
