import Testing
import TandemClock
import TandemWire

@Suite struct TimeDatagramTests {
    @Test func requestAndReplyRoundTrip() throws {
        let probe = ClockProbe(sequence: 0xDEAD_BEEF, sendTime: -123_456_789_012)
        let request = TimeDatagram.request(probe)
        let reply = TimeDatagram.reply(TimeReply(probe: probe, serverReceiveTime: Int64.max - 5, serverSendTime: Int64.min + 7))
        for datagram in [request, reply] {
            let bytes = datagram.encoded()
            #expect(bytes.count == TimeDatagram.size)
            #expect(bytes[0] == DatagramHeader.magic)
            #expect(bytes[2] == DatagramHeader.currentVersion)
            #expect(try TimeDatagram.decode(bytes) == datagram)
        }
        // Requests are as long as replies, so the service cannot amplify traffic.
        #expect(request.encoded().count == reply.encoded().count)
    }

    @Test func layoutIsBigEndian() {
        let bytes = TimeDatagram.request(ClockProbe(sequence: 0x0102_0304, sendTime: 0x0506_0708_090A_0B0C)).encoded()
        #expect(Array(bytes[0..<16]) == [0x54, 0x01, 0x01, 0x00, 0x01, 0x02, 0x03, 0x04,
                                         0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C])
    }

    @Test func badInputIsAClearErrorNeverACrash() {
        let good = TimeDatagram.request(ClockProbe(sequence: 1, sendTime: 2)).encoded()
        var badMagic = good
        badMagic[0] = 0x00
        var badKind = good
        badKind[1] = 0x7F
        var badVersion = good
        badVersion[2] = 2
        let cases: [([UInt8], String)] = [
            ([], "0 bytes, expected 32"),
            (Array(good.prefix(31)), "31 bytes, expected 32"),
            (good + [0], "33 bytes, expected 32"),
            (badMagic, "is not Tandem's magic"),
            (badKind, "unknown type 0x7f"),
            (badVersion, "version 2 is not supported"),
        ]
        for (bytes, message) in cases {
            #expect {
                try TimeDatagram.decode(bytes)
            } throws: { error in
                "\(error)".contains(message) && "\(error)".hasPrefix("time datagram")
            }
        }
    }

    @Test func randomBytesNeverCrashTheDecoder() {
        var state: UInt64 = 0x1234_5678
        for length in 0..<80 {
            for _ in 0..<50 {
                let bytes = (0..<length).map { _ -> UInt8 in
                    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    return UInt8(truncatingIfNeeded: state >> 56)
                }
                _ = try? TimeDatagram.decode(bytes)
            }
        }
    }
}
