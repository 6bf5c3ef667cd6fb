import Foundation
import TandemNet
import TandemTestKit
import TandemHarness
import TandemWire
import Testing

/// A seat cannot be taken, against `tandem serve` as its own process: an invitee who holds the
/// session's secret and knows another participant's identity and key tries to resume as them.
@Suite("Relay seat theft")
struct SeatTheftProcessTests {
    @Test("resuming another's seat with the session's secret is refused; the victim stays, the others see nothing")
    func seatCannotBeTaken() async throws {
        let serve = try ServeProcess()
        defer { serve.stop() }
        let connector = NetworkRelayConnector(host: "127.0.0.1", port: serve.port)
        let session = UUID()
        let secret = [UInt8](repeating: 0x5E, count: 32)
        let ana = Member(link: try await connector.join(RelayHarness.request(session, "ana", key: secret, create: true)))
        let ben = Member(link: try await connector.join(RelayHarness.request(session, "ben", key: secret)))
        let anaEntry = try #require(ben.link.welcome.participants.first { $0.displayName == "ana" })
        #expect(anaEntry.isSelfCertified)
        // Ana has heard of Ben; what either sees from here on is the attack's doing.
        #expect(await ana.recorder.wait { $0.contains { if case .participantJoined = $0 { true } else { false } } })
        let before = (ana: ana.recorder.events.count, ben: ben.recorder.events.count)

        // Mallory: the session's secret, Ana's identity and public key, her own signing key.
        let sessionKey = SigningKeyPair(seed: secret)
        let malloryKey = SigningKeyPair()
        for claimedKey in [anaEntry.publicKey, malloryKey.publicKey] {
            let mallory = try RawRelayClient(port: serve.port)
            try mallory.send(RelayFrame.hello(RelayHello(
                sessionID: session, participant: RelayParticipantEntry(id: anaEntry.id, publicKey: claimedKey, displayName: "ana"),
                create: false, activity: [], resume: true, received: 0)).encoded())
            // Answer the challenge as well as she can: right for the session, her own key for Ana's part.
            var frames: [RelayFrame] = []
            var reader = RelayFrameReader()
            var buffer = [UInt8](repeating: 0, count: 4096)
            let deadline = ContinuousClock.now + .seconds(5)
            while frames.isEmpty, ContinuousClock.now < deadline {
                if let count = try mallory.socket.read(into: &buffer) {
                    if count == 0 { break }
                    reader.append(buffer[..<count])
                    while let frame = try reader.next() { frames.append(frame) }
                } else {
                    try await Task.sleep(for: .milliseconds(2))
                }
            }
            if case let .challenge(nonce, _)? = frames.first {
                let message = { (signer: RelayAuthenticator.Signer) in
                    RelayAuthenticator.challengeMessage(signer, nonce: nonce, sessionID: session, participantID: anaEntry.id,
                                                        participantKey: claimedKey)
                }
                try mallory.send(RelayFrame.proof(sessionSignature: sessionKey.sign(message(.session)),
                                                  participantSignature: malloryKey.sign(message(.participant))).encoded())
            }
            let (rest, closed) = mallory.framesUntilClosed()
            #expect(closed, "the thief's connection is closed")
            let refusal = (frames + rest).compactMap { if case let .refusal(fault) = $0 { fault } else { nil } }.first
            #expect(refusal?.code == .wrongIdentity, "\(frames + rest)")
        }

        // Ana is still on her seat and connected: a message from Ben reaches her.
        try ben.link.send(Array("still yours".utf8), to: .only([anaEntry.id]), reliable: true)
        #expect(await ana.recorder.waitForMessages(1) == ["still yours"])
        try ana.link.send(Array("still mine".utf8), to: .everyone, reliable: true)
        #expect(await ben.recorder.waitForMessages(1) == ["still mine"])
        let seen = Array(ana.recorder.events.dropFirst(before.ana)) + Array(ben.recorder.events.dropFirst(before.ben))
        #expect(!seen.contains { event in
            switch event {
            case .participantLeft, .participantJoined, .connectionInterrupted, .failed: true
            default: false
            }
        }, "nobody saw anything change: \(seen)")
        await ana.link.leave()
        await ben.link.leave()
        #expect(serve.isRunning)
    }
}
