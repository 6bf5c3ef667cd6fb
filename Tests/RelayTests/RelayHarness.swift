import Foundation
import TandemNet
import TandemTestKit
import TandemTestKit

/// A relay of either kind, ready for participants to join, with short timings so that the
/// grace period and flood control can be exercised in a test.
final class RelayHarness: Sendable {
    let relay: TestRelay
    var kind: TransportKind { relay.kind }
    var connector: any RelayConnector { relay.connector }
    var server: RelayServer? { relay.server }

    static let testConfiguration: RelayCoreConfiguration = {
        var configuration = RelayCoreConfiguration()
        configuration.gracePeriod = 600_000_000
        return configuration
    }()

    init(_ kind: TransportKind, configuration: RelayCoreConfiguration = RelayHarness.testConfiguration,
         link: RelayLinkConfiguration = RelayLinkConfiguration()) throws {
        relay = try TestRelay(kind, configuration: configuration, link: link)
    }

    func shutdown() {
        relay.shutdown()
    }

    /// A join request for `name` in `session`.
    static func request(_ session: UUID, _ name: String, key: [UInt8] = RelayHarness.key, create: Bool = false,
                        activity: [UInt8] = Array("watch together".utf8)) -> RelayJoinRequest {
        RelayJoinRequest(sessionID: session, displayName: name, sessionKey: SigningKeyPair(seed: key),
                         createIfAbsent: create, activity: activity)
    }

    static let key = [UInt8](repeating: 7, count: 32)

    /// Joins and starts recording the link's events.
    func join(_ session: UUID, _ name: String, create: Bool = false, key: [UInt8] = RelayHarness.key) async throws -> Member {
        let link = try await connector.join(RelayHarness.request(session, name, key: key, create: create))
        return Member(link: link)
    }
}

/// A joined participant and everything its link reported.
final class Member: Sendable {
    let link: any RelayLink
    let recorder: EventRecorder

    init(link: any RelayLink) {
        self.link = link
        recorder = EventRecorder(link.events)
    }

    /// The participant's identity.
    var id: UUID { (link as? RelayClientLink)?.participant.id ?? UUID() }
    /// The link as its concrete type, for the test hook.
    var client: RelayClientLink? { link as? RelayClientLink }
}

/// Collects a link's events in the background, for tests to wait on with a timeout.
final class EventRecorder: Sendable {
    private let recording: StreamRecording<RelayEvent>

    init(_ stream: AsyncStream<RelayEvent>) {
        recording = StreamRecording(stream)
    }

    var events: [RelayEvent] { recording.elements }
    var finished: Bool { recording.finished }

    /// Reliable and unreliable message bodies received, as text, in order.
    func messages(reliable: Bool? = nil) -> [String] {
        events.compactMap { event in
            guard case let .message(_, body, isReliable) = event, reliable == nil || reliable == isReliable else { return nil }
            return String(decoding: body, as: UTF8.self)
        }
    }

    /// Waits until `condition` holds over the events so far, or `timeout` passes; returns whether
    /// it held. `condition` is checked as each event arrives, and once the stream has finished.
    @discardableResult
    func wait(timeout: Duration = .seconds(10), until condition: @escaping @Sendable ([RelayEvent]) -> Bool) async -> Bool {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        return await recording.awaitElements(within: seconds, condition)
    }

    /// Waits until `count` messages have arrived.
    @discardableResult
    func waitForMessages(_ count: Int, reliable: Bool? = nil, timeout: Duration = .seconds(10)) async -> [String] {
        await wait(timeout: timeout) { [self] _ in messages(reliable: reliable).count >= count }
        return messages(reliable: reliable)
    }

    /// Waits for the stream to finish.
    @discardableResult
    func waitForFinish(timeout: Duration = .seconds(10)) async -> Bool {
        await wait(timeout: timeout) { [self] _ in finished }
    }
}

import Synchronization
