import Foundation
import Testing
import Tandem

// MARK: The pattern: catching up late joiners, as SharePlay's drawing sample does it: watch
// `activeParticipants`, and send the current state to the newcomers only.

struct Whiteboard: GroupActivity {
    static let activityIdentifier = "com.example.tandem.compat.whiteboard"
}

struct BoardState: Codable {
    var lines: [String]
}

struct NewLine: Codable {
    var text: String
}

@MainActor
final class WhiteboardModel {
    let session: GroupSession<Whiteboard>
    let messenger: GroupSessionMessenger
    let screen: Screen
    var lines: [String] = []
    var tasks = Set<Task<Void, Never>>()

    init(session: GroupSession<Whiteboard>, screen: Screen) {
        self.session = session
        messenger = GroupSessionMessenger(session: session)
        self.screen = screen
    }

    func configure() {
        let messenger = messenger
        tasks.insert(Task {
            for await (state, _) in messenger.messages(of: BoardState.self) {
                self.lines = state.lines
                self.screen.show("board \(self.lines.joined(separator: ","))")
            }
        })
        tasks.insert(Task {
            for await (line, _) in messenger.messages(of: NewLine.self) {
                self.lines.append(line.text)
                self.screen.show("board \(self.lines.joined(separator: ","))")
            }
        })
        tasks.insert(Task {
            var known: Set<Participant> = []
            for await activeParticipants in self.session.$activeParticipants.values {
                let newParticipants = activeParticipants.subtracting(known)
                known = activeParticipants
                let others = newParticipants.subtracting([self.session.localParticipant])
                if !others.isEmpty, !self.lines.isEmpty {
                    try? await messenger.send(BoardState(lines: self.lines), to: .only(others))
                }
            }
        })
        session.join()
    }

    func add(_ text: String) async throws {
        lines.append(text)
        screen.show("board \(lines.joined(separator: ","))")
        try await messenger.send(NewLine(text: text))
    }
}

// MARK: The test: two lines drawn before the late joiner arrives reach it from the host's
// catch-up; a line drawn after reaches it as a message.

@MainActor
@Suite struct LateJoinerPatternIOTests {
    @Test func aLateJoinerIsCaughtUpByTheOthers() async throws {
        let host = try Harness.participant("teacher")
        var sessions = host.sessions(for: Whiteboard.self).makeAsyncIterator()
        try await host.start(Whiteboard())
        let session = try #require(await sessions.next())
        let hostScreen = Screen()
        let hostModel = WhiteboardModel(session: session, screen: hostScreen)
        hostModel.configure()
        try await until(session.$state.values, "joined") { if case .joined = $0 { true } else { false } }
        try await hostModel.add("a")
        try await hostModel.add("b")

        let late = try await Harness.accept(session.invitation, on: try Harness.participant("pupil"), as: Whiteboard.self)
        let lateScreen = Screen()
        let lateModel = WhiteboardModel(session: late, screen: lateScreen)
        lateModel.configure()
        try await lateScreen.waitFor("the catch-up") { $0 == "board a,b" }
        try await hostModel.add("c")
        try await lateScreen.waitFor("the next line") { $0 == "board a,b,c" }
        #expect(lateModel.lines == ["a", "b", "c"])
        late.leave()
        session.end()
    }
}
