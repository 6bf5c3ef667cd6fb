import Foundation
import Testing

/// QuizNight with three processes: the host asks and keeps the scores; a late joiner gets the
/// current question and the scores from the host alone.
@Suite(.serialized, .timeLimit(.minutes(2))) struct QuizNightProcessTests {
    @Test func theHostAsksJudgesAndCatchesUpALateJoiner() throws {
        let host = try SampleProcess("QuizNight", name: "quizmaster")
        let invite = try host.invite()
        let ana = try SampleProcess("QuizNight", name: "ana", relay: invite)
        #expect(ana.waitFor("quiz hosted by quizmaster") != nil, "\(ana.transcript)")
        #expect(ana.waitFor("scores: ana 0") != nil, "\(ana.transcript)")

        host.send("ask What is 2+2? = 4")
        #expect(host.waitFor("asked question 1: What is 2+2?") != nil, "\(host.transcript)")
        #expect(ana.waitFor("question 1: What is 2+2?") != nil, "\(ana.transcript)")
        ana.send("answer 4")
        #expect(host.waitFor("ana answered '4' to question 1: right") != nil, "\(host.transcript)")
        #expect(ana.waitFor("question 1: right!") != nil, "\(ana.transcript)")
        #expect(ana.waitFor("scores: ana 1") != nil, "\(ana.transcript)")
        ana.send("answer 5")
        #expect(ana.waitFor("question 1: already answered") != nil, "\(ana.transcript)")

        // Bob comes late: the current question and the scores so far, from the host.
        let bob = try SampleProcess("QuizNight", name: "bob", relay: invite)
        #expect(bob.waitFor("quiz hosted by quizmaster") != nil, "\(bob.transcript)")
        #expect(bob.waitFor("question 1: What is 2+2?") != nil, "\(bob.transcript)")
        #expect(bob.waitFor("scores: ana 1, bob 0") != nil, "\(bob.transcript)")
        #expect(ana.waitFor("scores: ana 1, bob 0") != nil, "\(ana.transcript)")
        // Nobody but the host sent bob quiz state.
        #expect(!bob.lines.contains { $0.contains("ignored quiz message") }, "\(bob.transcript)")
        bob.send("answer five")
        #expect(bob.waitFor("question 1: wrong") != nil, "\(bob.transcript)")

        // Only the host asks.
        ana.send("ask What is 3+3? = 6")
        #expect(ana.waitFor("only the host asks questions") != nil, "\(ana.transcript)")

        host.send("ask Capital of France? = Paris")
        #expect(bob.waitFor("question 2: Capital of France?") != nil, "\(bob.transcript)")
        bob.send("answer paris")
        #expect(bob.waitFor("question 2: right!") != nil, "\(bob.transcript)")
        #expect(ana.waitFor("scores: ana 1, bob 1") != nil, "\(ana.transcript)")
        #expect(host.waitFor("scores: ana 1, bob 1") != nil, "\(host.transcript)")

        host.send("end")
        for participant in [host, ana, bob] {
            #expect(participant.waitForExit() == 0, "\(participant.transcript)")
        }
    }
}
