import Foundation
import Testing
@testable import Tandem
@testable import TandemParty

/// A removal and a rekey in people's words, and the `roles` event a kick makes.
@Suite struct RemovalSentenceTests {
    static func sentence(_ by: String, _ change: String, refused: String? = nil) -> String? {
        EventSentence.sentence(for: .roles(.init(by: by, change: change, operators: ["ana"], control: "everyone", refused: refused)))
    }

    @Test func aKickAndARekeyReadAsSentences() {
        #expect(Self.sentence("Ana", "kick Ben") == "Ana removed Ben from the party")
        #expect(Self.sentence("Ana", "rekey") == "Ana changed the party's key: only the new invite reads what follows")
        #expect(Self.sentence("Cy", "kick Ben", refused: "only operators may remove someone")
                == "Cy could not remove Ben: only operators may remove someone")
        #expect(Self.sentence("Cy", "rekey", refused: "only operators may change the session's key")
                == "Cy could not change the party's key: only operators may change the session's key")
    }

    @Test func theKickEventNamesWhoWasRemoved() throws {
        let (ana, ben) = (UUID(), UUID())
        let names = [ana: "ana", ben: "ben"]
        let change = EpochChange(epoch: 1, verifier: SessionSecret().verifier, boxes: [:])
        var roles = SessionRoles(operators: [ana])
        roles.removed = [ben]
        roles.epoch = 1
        let event = SessionRoleEvent(originator: ana, change: .kick(ben, change), refusal: nil, roles: roles, order: 9)
        #expect(WatchPartyEvent.Roles(event, naming: { names[$0] ?? "?" }) == .init(by: "ana", change: "kick ben", operators: ["ana"], control: "everyone"))
    }
}
