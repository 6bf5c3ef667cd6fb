import Foundation
import Tandem

/// A participant's side: shows what the host sends and sends answers to the host alone. Quiz
/// messages from anyone but the host are ignored.
@MainActor final class Contestant {
    let session: GroupSession<QuizNight>
    let messenger: GroupSessionMessenger
    /// Who runs the quiz: the sender of the first quiz state, which the host sends each newcomer.
    private var host: Participant?
    private var question: Question?
    private var scoreboard = Scoreboard(scores: [])

    init(session: GroupSession<QuizNight>, messenger: GroupSessionMessenger) {
        self.session = session
        self.messenger = messenger
    }

    /// Starts listening to the host; call before joining.
    func start() {
        let states = messenger.messages(of: QuizState.self)
        let questions = messenger.messages(of: Question.self)
        let boards = messenger.messages(of: Scoreboard.self)
        let verdicts = messenger.messages(of: Verdict.self)
        Task {
            for await (state, context) in states where host == nil || host == context.source {
                host = context.source
                print("quiz hosted by \(context.source.printableName)")
                if let current = state.question { show(current) }
                show(state.scoreboard)
            }
        }
        Task {
            for await (question, context) in questions where isHost(context.source) { show(question) }
        }
        Task {
            for await (board, context) in boards where isHost(context.source) { show(board) }
        }
        Task {
            for await (verdict, context) in verdicts where isHost(context.source) {
                print("question \(verdict.number): \(verdict.correct ? "right!" : TerminalText.sanitized(verdict.reason))")
            }
        }
        Task {
            for await change in session.participantChanges {
                for participant in change.joined { print("joined: \(participant.printableName)") }
                for participant in change.left { print("left: \(participant.printableName)") }
            }
        }
    }

    func answer(_ text: String) async throws {
        guard let host, let question else {
            print("no question yet")
            return
        }
        try await messenger.send(Answer(number: question.number, text: text), to: .only(host))
        print("answered question \(question.number): \(text)")
    }

    func showScores() { show(scoreboard) }

    private func isHost(_ participant: Participant) -> Bool {
        if participant == host { return true }
        // Before the host's state has arrived nobody is known to be the host (each kind of
        // message has its own stream, so a scoreboard can overtake the state): such a message is
        // dropped quietly, and the state brings the question and the scores anyway.
        if host != nil { print("ignored quiz message from \(participant.printableName), who is not the host") }
        return false
    }

    private func show(_ question: Question) {
        self.question = question
        print("question \(question.number): \(TerminalText.sanitized(question.text))")
    }

    private func show(_ board: Scoreboard) {
        scoreboard = board
        print("scores: \(TerminalText.sanitized(board.summary))")
    }
}
