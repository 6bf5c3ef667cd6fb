import Foundation
import Testing
@testable import Tandem
import TandemNet

/// Invites that name several relays: the further relays in the query (`r=`), the first as
/// `host` and `port`, repeated relays counted once, a bounded count, and errors that never echo
/// the secret.
@Suite struct InvitationRelaysTests {
    static let session = UUID(uuidString: "6b3f2a56-0b1e-4a8e-9f3e-1a2b3c4d5e6f")!
    static let secretText = "pFUlHzmR_sLoyKVkjB2QQXCATgHY20JSQHkPEruawfY"
    static let base = "tandem://127.0.0.1:7400/6b3f2a56-0b1e-4a8e-9f3e-1a2b3c4d5e6f?k=\(secretText)"

    @Test func severalRelaysRoundTripWithTheFirstAsHostAndPort() throws {
        let relays = [RelayEndpoint(host: "10.0.0.1", port: 7462), RelayEndpoint(host: "relay.example", port: 9),
                      RelayEndpoint(host: "::1", port: 7463)]
        let invitation = try Invitation(relays: relays, sessionID: UUID(), secret: SessionSecret())
        #expect(invitation.host == "10.0.0.1")
        #expect(invitation.port == 7462)
        #expect(invitation.relays == relays)
        #expect(invitation.furtherRelays == Array(relays.dropFirst()))
        let text = invitation.description
        #expect(text.hasPrefix("tandem://10.0.0.1:7462/\(invitation.sessionID.uuidString.lowercased())?k=\(invitation.secret.text)&r="))
        #expect(text.hasSuffix("&r=relay.example:9&r=[::1]:7463"))
        #expect(try Invitation(parsing: text) == invitation)
        // Its URL (which percent-encodes the brackets) reads back the same.
        #expect(try Invitation(parsing: invitation.url.absoluteString) == invitation)
        #expect(invitation.url.scheme == "tandem")
        // One relay: the invite is exactly what it always was.
        let single = try Invitation(relays: [relays[0]], sessionID: invitation.sessionID, secret: invitation.secret)
        #expect(single == Invitation(host: "10.0.0.1", port: 7462, sessionID: invitation.sessionID, secret: invitation.secret))
        #expect(!single.description.contains("&r="))
    }

    @Test func anIPv6FirstRelayAndFurtherOnesReadBack() throws {
        let text = "tandem://[::1]:7400/6b3f2a56-0b1e-4a8e-9f3e-1a2b3c4d5e6f?k=\(Self.secretText)&r=127.0.0.1:7401&r=%5Bfd00::2%5D:7402"
        let invitation = try Invitation(parsing: text)
        #expect(invitation.relays.map(\.description) == ["[::1]:7400", "127.0.0.1:7401", "[fd00::2]:7402"])
        #expect(invitation.sessionID == Self.session)
    }

    @Test func repeatedRelaysCountOnceAndOtherParametersAreIgnored() throws {
        let text = Self.base + "&r=127.0.0.1:7400&r=10.0.0.2:1&unknown=y&r=10.0.0.2:1&r=RELAY.example:2&r=relay.EXAMPLE:2"
        let invitation = try Invitation(parsing: text)
        #expect(invitation.relays.map(\.description) == ["127.0.0.1:7400", "10.0.0.2:1", "RELAY.example:2"])
        let built = try Invitation(relays: [RelayEndpoint(host: "a", port: 1), RelayEndpoint(host: "a", port: 1), RelayEndpoint(host: "a", port: 2)],
                                   sessionID: UUID(), secret: SessionSecret())
        #expect(built.relays.count == 2)
    }

    @Test func atMostEightRelays() throws {
        let seven = (1...7).map { "&r=10.0.0.\($0):7462" }.joined()
        #expect(try Invitation(parsing: Self.base + seven).relays.count == 8)
        // Repeats do not count against the bound.
        #expect(try Invitation(parsing: Self.base + seven + seven).relays.count == 8)
        let tooMany = #expect(throws: InvitationError.self) { try Invitation(parsing: Self.base + seven + "&r=10.0.0.8:7462") }
        #expect(tooMany?.description == "the invite names more than 8 relays")
        let nine = (1...9).map { RelayEndpoint(host: "10.0.0.\($0)", port: 1) }
        #expect(throws: InvitationError.self) { try Invitation(relays: nine, sessionID: UUID(), secret: SessionSecret()) }
        #expect(throws: InvitationError.self) { try Invitation(relays: [], sessionID: UUID(), secret: SessionSecret()) }
    }

    @Test(arguments: [
        "&r=", "&r", "&r=10.0.0.1", "&r=10.0.0.1:0", "&r=10.0.0.1:70000", "&r=:7462", "&r=::1:7462", "&r=[::1]",
        "&r=[::1:7462", "&r=[10.0.0.1]:7462", "&r=a%20b:1", "&r=a/b:1", "&r=a@b:1", "&r=10.0.0.1:+1", "&r=10.0.0.1:%EF%BC%91",
        "&r=k=\(secretText)", "&r=\(secretText)",
    ])
    func malformedFurtherRelaysAreClearErrorsWithoutTheSecret(suffix: String) {
        let error = #expect(throws: InvitationError.self) { try Invitation(parsing: Self.base + suffix) }
        let message = error?.description ?? ""
        #expect(message.contains("further relay 1 (r=) is not HOST:PORT"), "\(message)")
        #expect(!message.contains("pFUlHzmR") && !message.contains("k="))
    }

    @Test func aRelayListReadsInOrderWithoutRepeatsAndSaysWhichEntryIsWrong() throws {
        let relays = try RelayEndpoint.list(parsing: "127.0.0.1:7462, [::1]:7463,127.0.0.1:7462")
        #expect(relays == [RelayEndpoint(host: "127.0.0.1", port: 7462), RelayEndpoint(host: "::1", port: 7463)])
        let error = #expect(throws: RelayEndpointListError.self) { try RelayEndpoint.list(parsing: "127.0.0.1:7462,nonsense") }
        #expect(error?.description.hasPrefix("relay 2 of 2 is not HOST:PORT") == true)
        #expect(error?.description.contains("nonsense") == false)
        #expect(throws: RelayEndpointListError.self) { try RelayEndpoint.list(parsing: "") }
        #expect(throws: RelayEndpointListError.self) { try RelayEndpoint.list(parsing: "127.0.0.1:1,") }
        let nine = (1...9).map { "10.0.0.\($0):1" }.joined(separator: ",")
        #expect(throws: RelayEndpointListError.self) { try RelayEndpoint.list(parsing: nine) }
    }
}
