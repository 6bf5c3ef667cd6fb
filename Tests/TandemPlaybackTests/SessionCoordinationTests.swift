import Foundation
import Synchronization
import Testing
import Tandem
import TandemClock
@testable import TandemPlayback
import TandemTestKit

/// What a coordinator and its session do together, with whole participants in virtual time
/// (`VirtualSessions`, each with a coordinator coordinating with its session and a scripted
/// player): a mismatched item told to everyone, and the session's ordered subscription ending
/// when its handler says so.
@Suite struct SessionCoordinationTests {
    @Test func mismatchedContentIsReportedToEveryone() throws {
        let sessions = VirtualSessions(activity: WatchTogether(item: "film"))
        defer { sessions.shutdown() }
        let host = SessionParticipant(try sessions.join("host"), identity: "d=60.000;h=00000000000000aa")
        let ana = SessionParticipant(try sessions.join("ana"), identity: "d=60.000;h=00000000000000bb")
        sessions.run()
        try host.coordinator.transitionToItem(identifier: "film")
        sessions.run(for: 300)
        for member in [host, ana] {
            let mismatches = member.events.compactMap { event -> [UUID: String]? in
                if case .itemMismatch(let item, let identities) = event, item == "film" { identities } else { nil }
            }
            let mismatch = try #require(mismatches.last, "\(member.session.localParticipant) was told of no mismatch")
            #expect(mismatch == [host.session.localParticipant.id: "d=60.000;h=00000000000000aa",
                                 ana.session.localParticipant.id: "d=60.000;h=00000000000000bb"])
        }
    }

    @Test func anOrderedSubscriptionEndsWhenItsHandlerSaysSo() throws {
        let sessions = VirtualSessions(activity: WatchTogether(item: "film"))
        defer { sessions.shutdown() }
        let session = try sessions.join("host").session
        let handed = Mutex<[UInt64]>([])
        let finished = Mutex(0)
        session.orderedDeliveries(while: { delivery in
            handed.withLock { $0.append(delivery.order) }
            return handed.withLock { $0.count } < 2
        }, finished: { finished.withLock { $0 += 1 } })
        for line in ["one", "two", "three", "four"] { try session.sendChat(line) }
        sessions.run(for: 100)
        // The second record ended it: nothing after, and the end told once.
        #expect(handed.withLock { $0 } == [1, 2])
        #expect(finished.withLock { $0 } == 1)
        // A later subscription starts from what comes next (the ended one kept no backlog).
        let later = Mutex<[UInt64]>([])
        session.orderedDeliveries(while: { delivery in
            later.withLock { $0.append(delivery.order) }
            return true
        })
        #expect(later.withLock { $0 }.isEmpty)
        try session.sendChat("five")
        sessions.run(for: 100)
        #expect(later.withLock { $0 } == [5])
        #expect(finished.withLock { $0 } == 1)
    }
}
