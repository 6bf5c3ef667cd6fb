import Foundation
import Testing
import Tandem

/// A plain `Codable` class that is not `Sendable`, as SharePlay sample code uses.
final class Stroke: Codable {
    var points: [Double]
    init(points: [Double]) { self.points = points }
}

/// Code written in the SharePlay style on the main actor compiles and runs against Tandem in
/// Swift 6 mode: it sends and receives a non-`Sendable` value with no extra annotations.
@MainActor
@Suite struct SourceCompatibilityIOTests {
    @Test func mainActorCodeSendsAndReceivesNonSendableValues() async throws {
        let hosted = try await SessionIOTests.host(.inMemory)
        defer { hosted.relay.shutDown() }
        let guest = try await SessionIOTests.guest("ana", of: hosted)
        let messenger = GroupSessionMessenger(session: hosted.session, deliveryMode: .unreliable)
        let guestMessenger = GroupSessionMessenger(session: guest)
        var received: [Stroke] = []
        let listener = Task { @MainActor in
            for await (stroke, context) in guestMessenger.messages(of: Stroke.self) {
                received.append(stroke)
                #expect(context.source.displayName == "host")
                if received.count == 2 { break }
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        let stroke = Stroke(points: [0, 1, 2])
        try await messenger.send(stroke)
        stroke.points.append(3)
        try await messenger.send(stroke)
        _ = await listener.value
        #expect(received.map(\.points) == [[0, 1, 2], [0, 1, 2, 3]])
    }
}
