import Foundation
import SampleSupport
import Tandem

/// The activity: a quiz run by the participant who starts it.
struct QuizNight: GroupActivity {
    var metadata: GroupActivityMetadata {
        var metadata = GroupActivityMetadata()
        metadata.title = "Quiz Night"
        return metadata
    }
}

await SampleLaunch.run("QuizNight") { launch in
    let session = try await launch.session(of: QuizNight())
    let messenger = GroupSessionMessenger(session: session)
    // The one who started the session runs the quiz; everyone else plays.
    let quizmaster = session.isLocallyInitiated ? Quizmaster(session: session, messenger: messenger) : nil
    let contestant = quizmaster == nil ? Contestant(session: session, messenger: messenger) : nil
    quizmaster?.start()
    contestant?.start()
    try await session.joinAndWait()
    if launch.isHosting { print(session.invitation.url.absoluteString) }
    if quizmaster != nil {
        print("joined as \(launch.name), the quizmaster: ask QUESTION = ANSWER, scores, quit, end")
    } else {
        print("joined as \(launch.name): answer TEXT, scores, quit")
    }

    let commands = Task {
        for await line in InputLines() {
            let (verb, rest) = InputLines.command(line)
            do {
                switch verb {
                case "ask":
                    guard let quizmaster else {
                        print("only the host asks questions")
                        continue
                    }
                    try await quizmaster.ask(rest)
                case "answer":
                    guard let contestant else {
                        print("the host does not answer")
                        continue
                    }
                    try await contestant.answer(rest)
                case "scores":
                    if let quizmaster { print("scores: \(quizmaster.scoreboard.summary)") }
                    contestant?.showScores()
                case "quit", "leave": session.leave()
                case "end": session.end()
                default: print("unknown command '\(verb)' (ask, answer, scores, quit, end)")
                }
            } catch {
                print("could not \(verb): \(TerminalText.sanitized("\(error)"))")
            }
        }
        session.leave()
    }
    await session.waitUntilOver()
    commands.cancel()
}
