#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SampleSupport
import Tandem

/// The activity: drawing on one canvas together.
struct DrawTogether: GroupActivity {
    var metadata: GroupActivityMetadata {
        var metadata = GroupActivityMetadata()
        metadata.title = "Draw Together"
        return metadata
    }
}

/// Holds the canvas and carries its changes to and from the group, on the main actor as an app's
/// view model would.
@MainActor final class CanvasModel {
    let session: GroupSession<DrawTogether>
    /// Strokes: frequent, small, and each superseded by the next, so a lost one costs little.
    let strokes: GroupSessionMessenger
    /// Clearing and catching up: these must arrive.
    let reliable: GroupSessionMessenger
    var canvas = Canvas()
    /// Redraw after every change when a person is watching.
    let redraws = isatty(1) != 0

    init(session: GroupSession<DrawTogether>) {
        self.session = session
        strokes = GroupSessionMessenger(session: session, deliveryMode: .unreliable)
        reliable = GroupSessionMessenger(session: session, deliveryMode: .reliable)
    }

    /// Starts receiving; call before joining so that nothing sent after the join is missed.
    func receive() {
        let incoming = strokes.messages(of: Stroke.self)
        let clears = reliable.messages(of: ClearCanvas.self)
        let catchUps = reliable.messages(of: CanvasMessage.self)
        Task {
            for await (stroke, context) in incoming where canvas.add(stroke) {
                print("stroke from \(context.source.printableName): \(stroke.points.count) points of '\(TerminalText.sanitized(stroke.ink))'")
                redraw()
            }
        }
        Task {
            for await (_, context) in clears {
                canvas.clear()
                print("canvas cleared by \(context.source.printableName)")
                redraw()
            }
        }
        Task {
            for await (message, context) in catchUps {
                let added = message.strokes.filter { canvas.add($0) }.count
                guard added > 0 else { continue }
                print("caught up: \(added) strokes from \(context.source.printableName)")
                redraw()
            }
        }
        Task {
            // Whoever already draws here sends newcomers the strokes so far.
            for await change in session.participantChanges {
                for participant in change.joined { print("joined: \(participant.printableName)") }
                for participant in change.left { print("left: \(participant.printableName)") }
                guard !change.joined.isEmpty, !canvas.strokes.isEmpty else { continue }
                try? await reliable.send(CanvasMessage(strokes: canvas.strokes), to: .only(Set(change.joined)))
            }
        }
    }

    func draw(_ points: [Point], ink: String) async throws {
        let stroke = Stroke(id: UUID(), ink: ink, points: points)
        canvas.add(stroke)
        try await strokes.send(stroke)
        print("drew \(points.count) points of '\(ink)'")
        redraw()
    }

    func clear() async throws {
        canvas.clear()
        try await reliable.send(ClearCanvas())
        print("canvas cleared")
        redraw()
    }

    func show() {
        print("canvas (\(canvas.strokes.count) strokes):")
        for row in canvas.rendered() { print(TerminalText.sanitized(row)) }
    }

    private func redraw() {
        if redraws { show() }
    }
}

/// Reads `line X1 Y1 X2 Y2 [INK]` or `dot X Y [INK]` into points and ink.
func parseStroke(_ verb: String, _ rest: String) -> (points: [Point], ink: String)? {
    let words = rest.split(separator: " ").map(String.init)
    let numbers = words.compactMap { Int($0) }
    let inkWord = words.count > numbers.count ? words.last! : "#"
    let ink = String(inkWord.prefix(1))
    switch (verb, numbers.count) {
    case ("dot", 2): return ([Point(x: numbers[0], y: numbers[1])], ink)
    case ("line", 4): return (Canvas.line(from: Point(x: numbers[0], y: numbers[1]), to: Point(x: numbers[2], y: numbers[3])), ink)
    default: return nil
    }
}

await SampleLaunch.run("DrawTogether") { launch in
    let session = try await launch.session(of: DrawTogether())
    let model = CanvasModel(session: session)
    model.receive()
    try await session.joinAndWait()
    if launch.isHosting { print(session.invitation.url.absoluteString) }
    print("joined as \(launch.name); canvas \(Canvas.width)x\(Canvas.height): line X1 Y1 X2 Y2 [INK], dot X Y [INK], clear, show, quit")

    let commands = Task {
        for await line in InputLines() {
            let (verb, rest) = InputLines.command(line)
            do {
                switch verb {
                case "line", "dot":
                    guard let (points, ink) = parseStroke(verb, rest) else {
                        print("usage: line X1 Y1 X2 Y2 [INK] | dot X Y [INK]")
                        continue
                    }
                    try await model.draw(points, ink: ink)
                case "clear": try await model.clear()
                case "show": model.show()
                case "quit", "leave": session.leave()
                case "end": session.end()
                default: print("unknown command '\(verb)' (line, dot, clear, show, quit, end)")
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
