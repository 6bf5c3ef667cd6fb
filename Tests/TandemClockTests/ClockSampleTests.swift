import Testing
import TandemClock

@Suite struct ClockSampleTests {
    @Test func offsetAndDelayFollowTheFourTimestamps() throws {
        // Session is 1 s ahead; 3 ms out, 5 ms back, 1 ms in the service.
        let sample = ClockSample(clientSendTime: 100_000_000, serverReceiveTime: 1_103_000_000,
                                 serverSendTime: 1_104_000_000, clientReceiveTime: 109_000_000)
        #expect(sample.roundTripDelay == 8_000_000)
        // Asymmetry of 2 ms shows up as 1 ms of offset error, which the sample cannot know.
        #expect(sample.offset == 999_000_000)
        #expect(sample.localMidpoint == 104_500_000)
        #expect(sample.isConsistent)
    }

    @Test func offsetsOfDaysDoNotOverflow() {
        let day: Int64 = 86_400_000_000_000
        let sample = ClockSample(clientSendTime: Int64.max / 2, serverReceiveTime: Int64.max / 2 + 40 * day,
                                 serverSendTime: Int64.max / 2 + 40 * day + 10, clientReceiveTime: Int64.max / 2 + 30)
        #expect(sample.offset == 40 * day - 10)
        #expect(sample.roundTripDelay == 20)
    }

    @Test func impossibleOrderIsInconsistent() {
        let backwards = ClockSample(clientSendTime: 10, serverReceiveTime: 0, serverSendTime: 0, clientReceiveTime: 5)
        #expect(!backwards.isConsistent)
        let slowService = ClockSample(clientSendTime: 0, serverReceiveTime: 0, serverSendTime: 100, clientReceiveTime: 50)
        #expect(!slowService.isConsistent)
    }
}
