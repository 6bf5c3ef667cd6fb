import Foundation
import Testing
import TandemNATS
import TandemNet
import TandemTestKit
import TandemHarness

/// A real three-node cluster with authentication and a replicated (R3) stream: the stream
/// leader's node is killed with SIGKILL under a client connected to it, and compare-and-set
/// publishing resumes on a new leader, nothing lost, nothing duplicated.
@Suite(.enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"))
struct NATSClusterProcessTests {
    @Test func killingTheStreamLeaderLosesAndDuplicatesNothing() async throws {
        let cluster = try NATSTestCluster(size: 3, authentication: .userPassword(user: "tandem", password: "cluster-secret"))
        defer { cluster.stop() }
        let setup = try await NATSConnection.connect(to: cluster.url)
        let setupJetStream = JetStream(connection: setup)
        let stream = JetStreamStreamConfiguration(name: "ORDERED", subjects: ["ordered.>"], storage: .file, replicas: 3,
                                                  duplicateWindow: 120_000_000_000, allowDirect: true)
        // The meta leader may still be settling just after the cluster is healthy.
        var info = try await within(15, "the R3 stream with a leader") {
            while true {
                if let info = try? await setupJetStream.createStream(stream), info.cluster?.leader != nil { return info }
                if let info = try? await setupJetStream.streamInfo("ORDERED"), info.cluster?.leader != nil { return info }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        await setup.close()
        let leaderName = try #require(info.cluster?.leader)
        let leader = try #require(cluster.node(named: leaderName))

        // The client is on the leader's node first, so that the kill takes its connection too.
        let others = cluster.nodes.filter { $0 !== leader }.map { "127.0.0.1:\($0.port)" }
        var configuration = NATSConfiguration()
        configuration.reconnectWait = 50_000_000
        configuration.maximumReconnectWait = 500_000_000
        configuration.pingInterval = 1_000_000_000
        let url = "nats://tandem:cluster-secret@127.0.0.1:\(leader.port)," + others.joined(separator: ",")
        let connection = try await NATSConnection.connect(to: url, configuration: configuration)
        #expect(connection.connectedServer?.port == leader.port)
        let jetStream = JetStream(connection: connection)

        var last: UInt64 = 0
        var acknowledgedAsDuplicates = 0
        func propose(_ index: Int) async throws -> JetStreamPubAck {
            let ack = try await jetStream.publish("ordered.session", payload: "proposal \(index)".bytes, options: JetStreamPublishOptions(
                messageID: "proposal-\(index)", expectedLastSubjectSequence: last, attemptTimeout: .milliseconds(500), retryWindow: .seconds(15)))
            last = ack.sequence
            if ack.duplicate { acknowledgedAsDuplicates += 1 }
            return ack
        }
        for index in 0..<20 { _ = try await propose(index) }
        #expect(last == 20)

        leader.kill()
        let killed = ContinuousClock.now
        let resumed = try await propose(20)
        let outage = ContinuousClock.now - killed
        #expect(outage < .seconds(10), "ordering resumed \(outage) after the leader died")
        #expect(connection.connectedServer != nil && connection.connectedServer?.port != leader.port)
        for index in 21..<40 { _ = try await propose(index) }
        #expect(resumed.sequence == 21 && last == 40)
        // nats-server 2.9's replicated streams check the expected sequence before the message id:
        // a plain retry of a stored message meets "wrong last sequence", not "duplicate"...
        await #expect {
            _ = try await jetStream.publish("ordered.session", payload: "proposal 39".bytes, options: JetStreamPublishOptions(
                messageID: "proposal-39", expectedLastSubjectSequence: 39))
        } throws: { ($0 as? JetStreamError)?.kind == .wrongLastSequence }
        // ...which is why a retry (or a publish that says an earlier one may have been stored)
        // asks whether the message that moved the sequence is its own.
        let resent = try await jetStream.publish("ordered.session", payload: "proposal 39".bytes, options: JetStreamPublishOptions(
            messageID: "proposal-39", expectedLastSubjectSequence: 39, mayHaveBeenStored: true))
        #expect(resent == JetStreamPubAck(stream: "ORDERED", sequence: 40, duplicate: true))
        await #expect {
            _ = try await jetStream.publish("ordered.session", payload: "not stored".bytes, options: JetStreamPublishOptions(
                messageID: "proposal-x", expectedLastSubjectSequence: 39, mayHaveBeenStored: true))
        } throws: { ($0 as? JetStreamError)?.kind == .wrongLastSequence }

        info = try await jetStream.streamInfo("ORDERED")
        #expect(info.state.messages == 40 && info.state.lastSequence == 40)
        #expect(info.cluster?.leader != nil && info.cluster?.leader != leaderName)
        var payloads: [String] = []
        for sequence in 1...UInt64(40) {
            payloads.append(try await jetStream.message(stream: "ORDERED", sequence: sequence).payload.text)
        }
        #expect(payloads == (0..<40).map { "proposal \($0)" })

        // The killed node comes back on its ports with its store and catches up.
        try leader.start()
        await connection.close()
        print("NATS cluster: stream leader \(leaderName) killed, CAS publishing resumed after \(outage);"
              + " \(acknowledgedAsDuplicates) proposal(s) stored before the kill were acknowledged on retry as duplicates")
    }
}
