import Testing
import TandemClock

@Suite struct ClockPollingPolicyTests {
    /// Sends probes whenever due until `end`, with the given error bound, and returns them.
    static func probes(_ policy: inout ClockPollingPolicy, until end: Int64, errorBound: Int64?) -> [ClockProbe] {
        var sent: [ClockProbe] = []
        var now: Int64 = 0
        while now <= end {
            if let probe = policy.probe(now: now, errorBound: errorBound) { sent.append(probe) }
            now += 1_000_000
        }
        return sent
    }

    @Test func burstThenFastWhileTheBoundIsLargeThenSteady() {
        let configuration = ClockPollingPolicy.Configuration()
        var large = ClockPollingPolicy(startTime: 0)
        let fast = Self.probes(&large, until: 2_000_000_000, errorBound: 5_000_000)
        var small = ClockPollingPolicy(startTime: 0)
        let steady = Self.probes(&small, until: 10_000_000_000, errorBound: 10_000)

        let burstEnd = Int64(configuration.burstCount - 1) * configuration.burstInterval
        #expect(fast[configuration.burstCount - 1].sendTime == burstEnd)
        #expect(fast[configuration.burstCount].sendTime == burstEnd + configuration.fastInterval)
        #expect(steady[configuration.burstCount].sendTime == burstEnd + configuration.steadyInterval)
        // About one a second once the estimate is good.
        #expect(steady.count == configuration.burstCount + 9)
        #expect(Set(fast.map(\.sequence)).count == fast.count)
    }

    @Test func repliesAreMatchedInAnyOrderButOnlyOnce() throws {
        var policy = ClockPollingPolicy(startTime: 0, firstSequence: UInt32.max)
        let firstProbe = policy.probe(now: 0, errorBound: nil)
        let secondProbe = policy.probe(now: 25_000_000, errorBound: nil)
        let first = try #require(firstProbe)
        let second = try #require(secondProbe)
        #expect(second.sequence == 0, "sequence numbers wrap")
        func reply(_ probe: ClockProbe, at time: Int64) -> ClockPollingPolicy.ReplyOutcome {
            policy.onReply(sequence: probe.sequence, echoedSendTime: probe.sendTime,
                           serverReceiveTime: probe.sendTime + 7, serverSendTime: probe.sendTime + 8, receiveTime: time)
        }
        // Reordered: the second probe's reply comes first.
        guard case let .sample(late) = reply(second, at: 40_000_000) else { Issue.record("no sample"); return }
        #expect(late.clientSendTime == second.sendTime)
        guard case .sample = reply(first, at: 41_000_000) else { Issue.record("no sample"); return }
        #expect(reply(first, at: 42_000_000) == .duplicate)
        #expect(policy.statistics.answered == 2)
        #expect(policy.statistics.duplicates == 1)
        #expect(policy.outstandingCount == 0)
    }

    @Test func forgedOrUnknownRepliesAreTurnedAway() throws {
        var policy = ClockPollingPolicy(startTime: 0)
        let sent = policy.probe(now: 0, errorBound: nil)
        let probe = try #require(sent)
        let mismatched = policy.onReply(sequence: probe.sequence, echoedSendTime: probe.sendTime + 1,
                                        serverReceiveTime: 5, serverSendTime: 6, receiveTime: 10)
        #expect(mismatched == .mismatched)
        let unknown = policy.onReply(sequence: probe.sequence &+ 100, echoedSendTime: probe.sendTime,
                                     serverReceiveTime: 5, serverSendTime: 6, receiveTime: 10)
        #expect(unknown == .unexpected)
        // The genuine reply still counts.
        let genuine = policy.onReply(sequence: probe.sequence, echoedSendTime: probe.sendTime,
                                     serverReceiveTime: 5, serverSendTime: 6, receiveTime: 10)
        guard case .sample = genuine else { Issue.record("genuine reply refused"); return }
        #expect(policy.statistics.ignored == 2)
    }

    @Test func unansweredProbesExpireAsLostAndTheirLateRepliesAreIgnored() throws {
        var policy = ClockPollingPolicy(startTime: 0)
        let sent = policy.probe(now: 0, errorBound: nil)
        let probe = try #require(sent)
        policy.expire(now: policy.configuration.replyTimeout + 1)
        #expect(policy.statistics.lost == 1)
        #expect(policy.outstandingCount == 0)
        let late = policy.onReply(sequence: probe.sequence, echoedSendTime: probe.sendTime,
                                  serverReceiveTime: 5, serverSendTime: 6, receiveTime: policy.configuration.replyTimeout + 2)
        #expect(late == .unexpected)
    }

    @Test func outstandingProbesAreCapped() {
        var policy = ClockPollingPolicy(startTime: 0)
        let cap = policy.configuration.maximumOutstanding
        _ = Self.probes(&policy, until: Int64(cap + 10) * 50_000_000, errorBound: nil)
        #expect(policy.outstandingCount <= cap)
        #expect(policy.statistics.lost == policy.statistics.sent - policy.outstandingCount)
    }
}
