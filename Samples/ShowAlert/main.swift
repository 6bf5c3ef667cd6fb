import Foundation
import SampleSupport
import Tandem

/// The activity: ringing each other's bell.
struct ShowAlert: GroupActivity {
    var metadata: GroupActivityMetadata {
        var metadata = GroupActivityMetadata()
        metadata.title = "Ring the bell"
        return metadata
    }
}

/// The one message: someone rang, with a few words.
struct Bell: Codable {
    var message: String
}

await SampleLaunch.run("ShowAlert") { launch in
    let session = try await launch.session(of: ShowAlert())
    let messenger = GroupSessionMessenger(session: session)
    // Subscribe before joining, so that nothing sent after the join is missed.
    let bells = messenger.messages(of: Bell.self)
    try await session.joinAndWait()
    if launch.isHosting { print(session.invitation.url.absoluteString) }
    print("joined as \(launch.name); type 'ring MESSAGE' to ring everyone's bell, 'quit' to leave")

    Task {
        for await (bell, context) in bells {
            print("\u{7}🔔 \(context.source.printableName) rang: \(TerminalText.sanitized(bell.message))")
        }
    }
    Task {
        for await change in session.participantChanges {
            for participant in change.joined { print("joined: \(participant.printableName)") }
            for participant in change.left { print("left: \(participant.printableName)") }
        }
    }
    let commands = Task {
        for await line in InputLines() {
            let (verb, rest) = InputLines.command(line)
            switch verb {
            case "ring":
                do {
                    try await messenger.send(Bell(message: rest.isEmpty ? "ding" : rest))
                    print("rang everyone: \(rest.isEmpty ? "ding" : rest)")
                } catch {
                    print("could not ring: \(TerminalText.sanitized("\(error)"))")
                }
            case "quit", "leave": session.leave()
            case "end": session.end()
            default: print("unknown command '\(verb)' (ring MESSAGE, quit, end)")
            }
        }
        // End of input: leave.
        session.leave()
    }
    await session.waitUntilOver()
    commands.cancel()
}
