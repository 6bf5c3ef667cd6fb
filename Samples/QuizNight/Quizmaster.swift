import Foundation
import Tandem

/// The host's side: the one authority on questions, answers and scores. Participants only ever
/// hear the quiz from here, so there is nothing for them to disagree about.
@MainActor final class Quizmaster {
    let session: GroupSession<QuizNight>
    let messenger: GroupSessionMessenger
    private var question: Question?
    private var correctAnswer = ""
    private var answered: Set<UUID> = []
    private var points: [UUID: Score] = [:]

    init(session: GroupSession<QuizNight>, messenger: GroupSessionMessenger) {
        self.session = session
        self.messenger = messenger
    }

    var scoreboard: Scoreboard {
        Scoreboard(scores: points.values.sorted { ($0.points, $1.name) > ($1.points, $0.name) })
    }

    /// Starts listening for answers and newcomers; call before joining.
    func start() {
        let answers = messenger.messages(of: Answer.self)
        Task {
            for await (answer, context) in answers { await judge(answer, from: context.source) }
        }
        Task {
            for await change in session.participantChanges {
                for participant in change.left { print("left: \(participant.printableName)") }
                guard !change.joined.isEmpty else { continue }
                for participant in change.joined {
                    print("joined: \(participant.printableName)")
                    points[participant.id] = points[participant.id] ?? Score(name: participant.displayName, points: 0)
                }
                // The newcomers learn the quiz so far from the host, and only from the host.
                try? await messenger.send(QuizState(question: question, scoreboard: scoreboard), to: .only(Set(change.joined)))
                await publishScores()
            }
        }
    }

    /// `ask What is 2+2? = 4`
    func ask(_ text: String) async throws {
        let parts = text.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            print("usage: ask QUESTION = ANSWER")
            return
        }
        let next = Question(number: (question?.number ?? 0) + 1, text: parts[0])
        question = next
        correctAnswer = parts[1]
        answered = []
        try await messenger.send(next)
        print("asked question \(next.number): \(next.text)")
    }

    private func judge(_ answer: Answer, from participant: Participant) async {
        let verdict: Verdict
        if let question, answer.number == question.number {
            if answered.insert(participant.id).inserted {
                let correct = answer.text.trimmingCharacters(in: .whitespaces).lowercased() == correctAnswer.lowercased()
                if correct { points[participant.id, default: Score(name: participant.displayName, points: 0)].points += 1 }
                verdict = Verdict(number: answer.number, correct: correct, reason: correct ? "right" : "wrong")
            } else {
                verdict = Verdict(number: answer.number, correct: false, reason: "already answered")
            }
        } else {
            verdict = Verdict(number: answer.number, correct: false, reason: "not the current question")
        }
        print("\(participant.printableName) answered '\(TerminalText.sanitized(answer.text))' to question \(answer.number): "
            + TerminalText.sanitized(verdict.reason))
        try? await messenger.send(verdict, to: .only(participant))
        if verdict.correct { await publishScores() }
    }

    private func publishScores() async {
        let board = scoreboard
        print("scores: \(TerminalText.sanitized(board.summary))")
        try? await messenger.send(board)
    }
}
