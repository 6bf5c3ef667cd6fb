import Tandem
import TandemNet
import TandemTestKit

/// A relay for session tests, and activity centers (one per simulated participant) configured
/// to use it.
final class RelayFixture: Sendable {
    let relay: TestRelay

    init(_ kind: TransportKind) async throws {
        relay = try TestRelay(kind)
    }

    /// A participant's center, named `name`, configured for this relay.
    func center(named name: String) -> ActivityCenter {
        let center = ActivityCenter()
        center.displayName = name
        center.configure(relay: relay.connector, host: relay.host, port: relay.port)
        return center
    }

    func shutDown() {
        relay.shutdown()
    }
}
