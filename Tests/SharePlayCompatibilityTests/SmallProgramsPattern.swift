import Foundation
import Testing
import Tandem

// MARK: The patterns: a quiz, a drawing canvas and an alert, as SharePlay programs have them.

struct QuizActivity: GroupActivity {
    static let activityIdentifier = "com.example.tandem.compat.quiz"
}

struct Question: Codable {
    var number: Int
    var text: String
}

struct AnswerMessage: Codable {
    var number: Int
    var answer: String
}

struct DrawingActivity: GroupActivity {
    static let activityIdentifier = "com.example.tandem.compat.drawing"
}

struct Stroke: Codable {
    var points: [Double]
}

struct CanvasMessage: Codable {
    var strokes: [Stroke]
}

struct AlertActivity: GroupActivity {
    static let activityIdentifier = "com.example.tandem.compat.alert"
}

struct ShowAlertMessage: Codable, CustomMessageIdentifiable {
    static let messageIdentifier = "com.example.tandem.compat.show-alert"
    var text: String
}

@MainActor
final class QuizHost {
    let messenger: GroupSessionMessenger
    let answers: GroupSessionMessenger.Messages<AnswerMessage>
    let screen: Screen
    var scores: [String: Int] = [:]

    init(session: GroupSession<QuizActivity>, screen: Screen) {
        messenger = GroupSessionMessenger(session: session)
        answers = messenger.messages(of: AnswerMessage.self)
        self.screen = screen
    }

    func ask(_ question: Question) async throws {
        try await messenger.send(question)
    }

    func collectAnswers(correct: String, expected: Int) async {
        var received = 0
        for await (answer, context) in answers {
            if answer.answer == correct { scores[context.source.displayName, default: 0] += 1 }
            received += 1
            screen.show("answer from \(context.source.displayName): \(answer.answer)")
            if received == expected { break }
        }
    }
}

@MainActor
final class Contestant {
    let messenger: GroupSessionMessenger
    let questions: GroupSessionMessenger.Messages<Question>
    let name: String

    init(session: GroupSession<QuizActivity>, name: String) {
        messenger = GroupSessionMessenger(session: session)
        questions = messenger.messages(of: Question.self)
        self.name = name
    }

    func answerQuestions(with answer: String) async throws {
        for await (question, context) in questions {
            try await messenger.send(AnswerMessage(number: question.number, answer: answer), to: .only(context.source))
            return
        }
    }
}

@MainActor
final class Canvas {
    let strokeMessenger: GroupSessionMessenger
    let reliableMessenger: GroupSessionMessenger
    var strokes: [Stroke] = []

    init(session: GroupSession<DrawingActivity>) {
        strokeMessenger = GroupSessionMessenger(session: session, deliveryMode: .unreliable)
        reliableMessenger = GroupSessionMessenger(session: session, deliveryMode: .reliable)
    }

    func draw(_ stroke: Stroke) async throws {
        strokes.append(stroke)
        try await strokeMessenger.send(stroke)
    }

    func catchUp(_ participant: Participant) async throws {
        try await reliableMessenger.send(CanvasMessage(strokes: strokes), to: .only(participant))
    }
}

// MARK: The tests.

/// A joined session of `Activity` started on a center of its own, and a joined guest.
func group<Activity: GroupActivity>(_ activity: Activity, host name: String) async throws
    -> (GroupSession<Activity>, GroupSession<Activity>) {
    let host = try Harness.participant(name)
    var sessions = host.sessions(for: Activity.self).makeAsyncIterator()
    try await host.start(activity)
    guard let session = await sessions.next() else { throw HarnessError("no session arrived") }
    session.join()
    try await until(session.$state.values, "joined") { if case .joined = $0 { true } else { false } }
    let guest = try await Harness.join(session.invitation, on: try Harness.participant("guest"), as: Activity.self)
    try await until(session.$activeParticipants.values, "two active") { $0.count == 2 }
    return (session, guest)
}

@MainActor
@Suite struct SmallProgramsPatternIOTests {
    @Test func aQuizAsksAndScores() async throws {
        let (session, guest) = try await group(QuizActivity(), host: "quizmaster")
        let screen = Screen()
        let host = QuizHost(session: session, screen: screen)
        let contestant = Contestant(session: guest, name: "guest")
        let answering = Task { try await contestant.answerQuestions(with: "Paris") }
        let collecting = Task { await host.collectAnswers(correct: "Paris", expected: 1) }
        try await host.ask(Question(number: 1, text: "The capital of France?"))
        try await answering.value
        await collecting.value
        #expect(host.scores == ["guest": 1])
        session.end()
    }

    @Test func aCanvasSendsStrokesAndCatchesUpANewcomer() async throws {
        let (session, guest) = try await group(DrawingActivity(), host: "painter")
        let canvas = Canvas(session: session)
        let guestStrokes = GroupSessionMessenger(session: guest, deliveryMode: .unreliable).messages(of: Stroke.self)
        let guestCatchUps = GroupSessionMessenger(session: guest, deliveryMode: .reliable).messages(of: CanvasMessage.self)
        try await canvas.draw(Stroke(points: [0, 0, 1, 1]))
        try await canvas.catchUp(guest.localParticipant)
        var catchUps = guestCatchUps.makeAsyncIterator()
        let (catchUp, _) = try #require(await catchUps.next())
        #expect(catchUp.strokes.map(\.points) == [[0, 0, 1, 1]])
        _ = guestStrokes
        session.end()
    }

    @Test func anAlertRoutesByItsMessageIdentifier() async throws {
        let (session, guest) = try await group(AlertActivity(), host: "alerter")
        let alerts = GroupSessionMessenger(session: guest).messages(of: ShowAlertMessage.self)
        try await GroupSessionMessenger(session: session).send(ShowAlertMessage(text: "Dinner is ready"))
        var iterator = alerts.makeAsyncIterator()
        let (alert, context) = try #require(await iterator.next())
        #expect(alert.text == "Dinner is ready" && context.source.displayName == "alerter")
        session.end()
    }
}
