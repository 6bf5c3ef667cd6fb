import Foundation
import TandemWire

/// A relay started with a creation key (`RelayCoreConfiguration.creationKey`) creates sessions
/// only for a creator proving it (`RelayCreationKey`): the relay `tandem host` runs for itself,
/// which strangers must not fill with sessions of their own (nor keep alive with them). Joins and
/// resumptions, which name a session that exists, never need the key.
extension RelayCore {
    /// The refusal of `hello`, a hello that would create its session, when this relay has a
    /// creation key and the hello does not prove it; nil when the creation may go on.
    func creationRefusal(_ hello: RelayHello) -> RelayFault? {
        guard let key = configuration.creationKey, hello.create, !hello.resume else { return nil }
        guard !RelayCreationKey.isProven(hello, key: key) else { return nil }
        return RelayFault(.creationRefused, hello.creationProof == nil
            ? "this relay creates sessions only for its own host (the hello proves no creation key)"
            : "this relay creates sessions only for its own host (the hello's creation proof does not match)")
    }
}
