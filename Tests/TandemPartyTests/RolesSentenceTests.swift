import Foundation
import Testing
@testable import Tandem
@testable import TandemParty

/// The `roles` event in people's words, and the event built from what the session reports.
@Suite struct RolesSentenceTests {
    static func sentence(_ by: String, _ change: String, refused: String? = nil) -> String? {
        EventSentence.sentence(for: .roles(.init(by: by, change: change, operators: ["ana"], control: "operators", refused: refused)))
    }

    @Test func eachChangeReadsAsASentence() {
        #expect(Self.sentence("Ana", "op Ben") == "Ana made Ben an operator")
        #expect(Self.sentence("Ana", "deop Ben") == "Ana took the operator role from Ben")
        #expect(Self.sentence("Ana", "control operators") == "Ana let operators alone control playback")
        #expect(Self.sentence("Ana", "control everyone") == "Ana let everyone control playback")
        #expect(Self.sentence("Ben", "claim") == "Ben took over as operator (everyone who had the role left)")
        #expect(Self.sentence("Ana", "reinstate") == "Ana is back as operator (they had not left)")
        #expect(Self.sentence("Ben", "op Cy", refused: "only operators may make others operators")
                == "Ben could not make Cy an operator: only operators may make others operators")
    }

    @Test func theEventNamesEveryoneAndSaysWhoControls() {
        let (ana, ben) = (UUID(), UUID())
        let names = [ana: "ana", ben: "ben"]
        let event = SessionRoleEvent(originator: ana, change: .grant(ben), refusal: nil,
                                     roles: SessionRoles(operators: [ana, ben], policy: SessionPolicy(playback: .operators)), order: 4)
        let fields = WatchPartyEvent.Roles(event, naming: { names[$0] ?? "?" })
        #expect(fields == .init(by: "ana", change: "op ben", operators: ["ana", "ben"], control: "operators"))
    }
}
