import Foundation
import Synchronization
@testable import Tandem
import TandemNet
import TandemTestKit
import Testing

/// A session runs on its participant's loop, the link's own, on both transports: the link's
/// events and the ordered records reach it there, and calls from elsewhere (and from the loop
/// itself) are taken there without a deadlock.
@Suite struct ParticipantLoopIOTests {
    @Test(arguments: TransportKind.allCases)
    func theSessionAndItsLinkShareOneLoop(transport: TransportKind) async throws {
        let hosted = try await SessionIOTests.host(transport)
        defer { hosted.relay.shutDown() }
        let ana = try await SessionIOTests.guest("ana", of: hosted)
        for session in [hosted.session, ana] {
            let link = try #require(session.joinedLink as? RelayClientLink)
            #expect(link.eventLoop === session.loop, "\(session.localParticipant)'s link runs on another loop")
            // Not called from the loop here: the confinement is not pretended.
            #expect(!session.loop.inLoop)
        }

        // The ordered records are handed over on the loop, and a call the handler makes into
        // the session (the coordinator's kind of call) is taken there at once.
        let onLoop = Mutex<[Bool]>([])
        let names = Mutex<[String?]>([])
        let session = hosted.session
        session.orderedDeliveries(while: { record in
            onLoop.withLock { $0.append(session.loop.inLoop) }
            names.withLock { $0.append(session.participant(identifiedBy: record.sender)?.displayName) }
            return true
        })
        try ana.sendOrdered(Array("{}".utf8))
        try ana.sendOrdered(Array("{}".utf8))
        #expect(await eventually { onLoop.withLock { $0.count } >= 2 })
        #expect(onLoop.withLock { $0 }.allSatisfy { $0 }, "a record was handed over off the loop")
        #expect(names.withLock { $0 }.allSatisfy { $0 == "ana" })

        // Leaving from the loop itself (a handler's call) neither waits on itself nor hangs.
        let left = Mutex(false)
        ana.loop.execute {
            ana.leave()
            left.withLock { $0 = true }
        }
        #expect(await eventually { left.withLock { $0 } })
        #expect(ana.state.isInvalidated(.left))
    }
}
