import Foundation
import Synchronization
import Testing
import TandemNATS
import TandemNet
import TandemHarness

/// What a relay loading a session relies on (`ClusterSessionLog.replay`): once a publish is
/// acknowledged through one node of a three-node cluster, the subject's last message read
/// through another node (`STREAM.MSG.GET` with `last_by_subj`, which only the stream leader
/// answers) is that message, even on streams created a moment before, as a cluster's relays
/// create theirs at start, and with many subjects written and read at once.
@Suite(.enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"))
struct NATSReadAfterWriteProcessTests {
    @Test func theLastMessageReadOnAnotherNodeIsTheOneAcknowledged() async throws {
        let cluster = try NATSTestCluster(size: 3)
        defer { cluster.stop() }
        var connections: [NATSConnection] = []
        for node in cluster.nodes { connections.append(try await NATSConnection.connect(to: "nats://127.0.0.1:\(node.port)")) }
        let jetStreams = connections.map { JetStream(connection: $0) }
        for shard in 0..<3 {
            let configuration = JetStreamStreamConfiguration(name: "READS_\(shard)", subjects: ["reads.\(shard).*"], storage: .file, replicas: 3,
                                                             duplicateWindow: 120_000_000_000, allowDirect: true)
            _ = try await within(15, "stream READS_\(shard) with a leader") {
                while true {
                    if let info = try? await jetStreams[shard].createStream(configuration), info.cluster?.leader != nil { return info }
                    if let info = try? await jetStreams[shard].streamInfo("READS_\(shard)"), info.cluster?.leader != nil { return info }
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
        }
        let mismatches = Mismatches()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<75 {
                group.addTask {
                    let shard = index % 3
                    let stream = "READS_\(shard)", subject = "reads.\(shard).s\(index)"
                    let writer = jetStreams[index % 3], reader = jetStreams[(index + 1) % 3]
                    // Read before it is written, as the creator's relay does, then written with
                    // compare-and-set on an empty subject, as a session's first entry is.
                    await #expect(throws: JetStreamError.self) { _ = try await writer.lastMessage(stream: stream, subject: subject) }
                    let ack = try await writer.publish(subject, payload: Array("entry \(index)".utf8), options: JetStreamPublishOptions(
                        messageID: "entry-\(index)", expectedLastSubjectSequence: 0))
                    do {
                        let message = try await reader.lastMessage(stream: stream, subject: subject)
                        if message.sequence != ack.sequence || message.payload != Array("entry \(index)".utf8) {
                            mismatches.list.withLock { $0.append("\(subject): read sequence \(message.sequence), acknowledged \(ack.sequence)") }
                        }
                    } catch {
                        mismatches.list.withLock { $0.append("\(subject): \(error) after sequence \(ack.sequence) was acknowledged") }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(mismatches.list.withLock { $0 } == [])
        for connection in connections { await connection.close() }
    }
}

/// The reads that did not return what was acknowledged, from the concurrent tasks.
private final class Mismatches: Sendable {
    let list = Mutex<[String]>([])
}
