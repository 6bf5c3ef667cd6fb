import Foundation
import Testing
import Tandem
import TandemNet
import TandemTestKit

/// An activity only these tests start, so that no other test's sessions reach their readers.
struct Doorbell: GroupActivity, Equatable {
    static let activityIdentifier = "org.tandem.tests.doorbell"
    var room: String
}

/// Activation while it is disabled (SharePlay's `.activationDisabled`): no relay configured, or
/// one configured that did not answer. `prepareForActivation()` says so, `activate()` fails with
/// a clear error and leaves no session behind, and activation works again once a relay does.
///
/// `GroupActivity.prepareForActivation()` and `activate()` use `ActivityCenter.shared`, which
/// other targets in the same test process configure (the compatibility harness); the part on the
/// shared center therefore runs in a fresh process of this test bundle, where nothing has
/// touched it.
@Suite struct ActivationDisabledProcessTests {
    /// Set in the fresh process that runs `onTheSharedCenterInAFreshProcess`.
    static let childVariable = "TANDEM_ACTIVATION_DISABLED_CHILD"
    static let inChild = ProcessInfo.processInfo.environment[childVariable] == "1"
    /// What the child prints once every expectation ran, so that the parent knows it ran at all
    /// (a filter that matched nothing would pass too).
    static let childMarker = "activation-disabled-child: checked"

    @Test func withoutARelayActivationFailsClearlyAndLeavesNoSession() async throws {
        let center = ActivityCenter()
        let observer = GroupStateObserver(center: center)
        #expect(!observer.isEligibleForGroupSession)
        #expect(!center.isEligible)
        var sessions = center.sessions(for: Doorbell.self).makeAsyncIterator()

        let error = await #expect(throws: GroupSessionError.self) { try await center.start(Doorbell(room: "hall")) }
        #expect(error?.code == .noRelay)
        #expect(error?.description.contains("tandem serve") == true, "\(String(describing: error))")

        // Once a relay is configured, activation is possible, and the first session to arrive is
        // the new one: the failed activation queued nothing.
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        center.configure(relay: relay.connector, host: relay.host, port: relay.port)
        #expect(observer.isEligibleForGroupSession)
        #expect(try await center.start(Doorbell(room: "kitchen")))
        let session = try #require(await sessions.next())
        #expect(session.activity == Doorbell(room: "kitchen"))
        #expect(session.activity != Doorbell(room: "hall"))
        session.end()
    }

    @Test func aRelayThatDoesNotAnswerDisablesActivationUntilOneDoes() async throws {
        let center = ActivityCenter()
        let observer = GroupStateObserver(center: center)
        var eligibility = observer.$isEligibleForGroupSession.values.makeAsyncIterator()
        #expect(await eligibility.next() == false)
        center.configure(relay: RefusingRelay(), host: "127.0.0.1", port: 9)
        #expect(await eligibility.next() == true)

        // Configured, so activation starts a session; joining it finds the relay unreachable:
        // the session ends with the relay's error and activation is disabled from then on.
        var sessions = center.sessions(for: Doorbell.self).makeAsyncIterator()
        #expect(try await center.start(Doorbell(room: "hall")))
        let session = try #require(await sessions.next())
        var states = session.$state.values.makeAsyncIterator()
        session.join()
        var reason: GroupSessionError?
        while reason == nil, let state = await states.next() {
            if case .invalidated(let why) = state { reason = why }
        }
        #expect(reason?.code == .relay)
        #expect(reason?.description.contains("connection refused") == true, "\(String(describing: reason))")
        #expect(await eligibility.next() == false)
        #expect(!center.isEligible)

        // A relay that answers enables it again.
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        center.configure(relay: relay.connector, host: relay.host, port: relay.port)
        #expect(await eligibility.next() == true)
        #expect(try await center.start(Doorbell(room: "porch")))
        let next = try #require(await sessions.next())
        #expect(next.activity.room == "porch")
        next.join()
        var joined = next.$state.values.makeAsyncIterator()
        while let state = await joined.next() {
            if case .joined = state { break }
            if case .invalidated(let why) = state {
                Issue.record("the session on a relay that answers ended: \(why)")
                break
            }
        }
        #expect(center.isEligible)
        next.end()
    }

    /// Runs `onTheSharedCenterInAFreshProcess` in a new process of this test bundle and checks
    /// that it ran and passed.
    @Test(.enabled(if: !inChild)) func theSharedCenterDisablesActivationWithoutARelay() throws {
        let bundle = CommandLine.arguments[0]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: bundle)
        process.arguments = ["--testing-library", "swift-testing", "--filter", "onTheSharedCenterInAFreshProcess"]
        var environment = ProcessInfo.processInfo.environment
        environment[Self.childVariable] = "1"
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        // Read while it runs, so that a full pipe never blocks it; the child ends on its own
        // (its own waits are bounded), and the read ends when it does.
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains(Self.childMarker), "the child did not run the shared-center test:\n\(text)")
    }

    /// The shared center as a fresh program has it: no relay, so activation is disabled, and
    /// `activate()` throws `.noRelay`; with a relay, preferred, and the session that arrives is
    /// the one activated then; without it again, disabled again.
    @Test(.enabled(if: inChild)) func onTheSharedCenterInAFreshProcess() async throws {
        #expect(!GroupStateObserver().isEligibleForGroupSession)
        #expect(await Doorbell(room: "hall").prepareForActivation() == .activationDisabled)
        var sessions = Doorbell.sessions().makeAsyncIterator()
        let error = await #expect(throws: GroupSessionError.self) { try await Doorbell(room: "hall").activate() }
        #expect(error?.code == .noRelay)

        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        ActivityCenter.shared.configure(relay: relay.connector, host: relay.host, port: relay.port)
        #expect(GroupStateObserver().isEligibleForGroupSession)
        #expect(await Doorbell(room: "kitchen").prepareForActivation() == .activationPreferred)
        #expect(try await Doorbell(room: "kitchen").activate())
        let session = try #require(await sessions.next())
        #expect(session.activity.room == "kitchen")

        // The session was never joined, so activating does not replace its activity: with the
        // relay gone, activation is disabled again and fails as before.
        ActivityCenter.shared.removeRelay()
        #expect(await Doorbell(room: "porch").prepareForActivation() == .activationDisabled)
        let again = await #expect(throws: GroupSessionError.self) { try await Doorbell(room: "porch").activate() }
        #expect(again?.code == .noRelay)
        #expect(session.activity.room == "kitchen")
        session.end()
        print(Self.childMarker)
    }
}

/// A connector whose relay refuses every connection, as a closed port does.
private struct RefusingRelay: RelayConnector {
    func join(_ request: RelayJoinRequest) async throws(RelayError) -> any RelayLink {
        throw RelayError(.unreachable, "127.0.0.1:9: connection refused")
    }
}
