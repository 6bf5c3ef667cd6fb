import Foundation
import Testing

/// DrawTogether with three processes: strokes on the unreliable messenger, a reliable clear, and
/// a late joiner who catches up with the strokes so far.
@Suite(.serialized, .timeLimit(.minutes(2))) struct DrawTogetherProcessTests {
    @Test func strokesReachEveryoneAndALateJoinerCatchesUp() throws {
        let host = try SampleProcess("DrawTogether", name: "host")
        let invite = try host.invite()
        let ana = try SampleProcess("DrawTogether", name: "ana", relay: invite)
        #expect(host.waitFor("joined: ana") != nil, "\(host.transcript)")
        #expect(ana.waitFor("joined: host") != nil, "\(ana.transcript)")

        host.send("line 0 0 9 0 #")
        #expect(host.waitFor("drew 10 points of '#'") != nil, "\(host.transcript)")
        #expect(ana.waitFor("stroke from host: 10 points of '#'") != nil, "\(ana.transcript)")
        ana.send("dot 5 5 *")
        #expect(host.waitFor("stroke from ana: 1 points of '*'") != nil, "\(host.transcript)")

        // Bob comes late: the strokes so far come to him from those already drawing.
        let bob = try SampleProcess("DrawTogether", name: "bob", relay: invite)
        #expect(bob.waitFor("caught up: 2 strokes from") != nil, "\(bob.transcript)")
        bob.send("show")
        #expect(bob.waitFor("canvas (2 strokes):") != nil, "\(bob.transcript)")
        #expect(bob.waitFor("|##########" + String(repeating: " ", count: 30) + "|") != nil, "\(bob.transcript)")
        #expect(bob.waitFor("|     *" + String(repeating: " ", count: 34) + "|") != nil, "\(bob.transcript)")

        // Bob draws too, and everyone sees it; then ana clears for everyone.
        bob.send("line 0 11 3 8 /")
        #expect(host.waitFor("stroke from bob: 4 points of '/'") != nil, "\(host.transcript)")
        #expect(ana.waitFor("stroke from bob: 4 points of '/'") != nil, "\(ana.transcript)")
        ana.send("clear")
        #expect(host.waitFor("canvas cleared by ana") != nil, "\(host.transcript)")
        #expect(bob.waitFor("canvas cleared by ana") != nil, "\(bob.transcript)")
        host.send("show")
        #expect(host.waitFor("canvas (0 strokes):") != nil, "\(host.transcript)")

        host.send("end")
        for participant in [host, ana, bob] {
            #expect(participant.waitForExit() == 0, "\(participant.transcript)")
        }
    }

    @Test func badStrokesGetAUsageLine() throws {
        let host = try SampleProcess("DrawTogether", name: "host")
        _ = try host.invite()
        host.send("line 1 2")
        #expect(host.waitFor("usage: line X1 Y1 X2 Y2") != nil, "\(host.transcript)")
        host.send("quit")
        #expect(host.waitForExit() == 0, "\(host.transcript)")
    }
}
