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
        let (handedOver, handing) = AsyncStream.makeStream(of: (onLoop: Bool, name: String?).self)
        let handovers = StreamRecording(handedOver)
        let session = hosted.session
        session.orderedDeliveries(while: { record in
            handing.yield((session.loop.inLoop, session.participant(identifiedBy: record.sender)?.displayName))
            return true
        })
        try ana.sendOrdered(Array("{}".utf8))
        try ana.sendOrdered(Array("{}".utf8))
        #expect(await handovers.awaitCount(2))
        #expect(handovers.elements.allSatisfy { $0.onLoop }, "a record was handed over off the loop")
        #expect(handovers.elements.allSatisfy { $0.name == "ana" })

        // Leaving from the loop itself (a handler's call) neither waits on itself nor hangs.
        let (left, leaving) = AsyncStream.makeStream(of: Void.self)
        ana.loop.execute {
            ana.leave()
            leaving.yield()
        }
        #expect(await awaitValue(left) { true })
        #expect(ana.state.isInvalidated(.left))
    }
}
