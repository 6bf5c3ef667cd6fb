// A relay that shows one participant a different history, for the tests that catch one: a real
// relay on 127.0.0.1 whose directives pass through a double before they are written. Once armed
// (a line `swap` on standard input), it exchanges the contents (sender, retention and body) of
// the next two ordered records it sends the participant named by `--victim`, keeping their
// orders and instants, as a dishonest relay could; frames to that participant in between wait,
// so that its sequence stays whole. Used only by tests; never part of `tandem`.
//
//     TandemDivergentRelay --victim NAME
//
// Prints `listening 127.0.0.1:PORT` once it listens, and `exchanged ORDER ORDER` when it did.

import Foundation
import Synchronization
import TandemNet
import TandemWire

/// The double's state, touched on the relay's loop (the hook) and by the reader of standard
/// input (arming), under its lock.
final class Exchanger: Sendable {
    private struct State {
        var armed = false
        var done = false
        /// The victim's connection and the first ordered frame held, with what waits behind it.
        var held: (connection: RelayConnectionID, sequence: UInt64, entry: RelayOrderedEntry)?
        var waiting: [RelayDirective] = []
    }

    let victim: String
    private let state = Mutex(State())

    init(victim: String) { self.victim = victim }

    func arm() { state.withLock { $0.armed = true } }

    /// Rewrites `directives` as the double does.
    func rewrite(_ directives: inout [RelayDirective], core: borrowing RelayCore) {
        let victimConnections = Set(directives.compactMap { directive -> RelayConnectionID? in
            if case let .send(id, _) = directive, core.participantName(on: id) == victim { id } else { nil }
        })
        guard !victimConnections.isEmpty || state.withLock({ $0.held != nil }) else { return }
        var out: [RelayDirective] = []
        var exchanged: (UInt64, UInt64)?
        state.withLock { state in
            for directive in directives {
                guard state.armed, !state.done else {
                    out.append(directive)
                    continue
                }
                if let held = state.held {
                    switch directive {
                    case let .send(id, .ordered(sequence, entry)) where id == held.connection:
                        var (first, second) = (held.entry, entry)
                        swap(&first.body, &second.body)
                        swap(&first.sender, &second.sender)
                        swap(&first.retention, &second.retention)
                        out.append(.send(id, .ordered(sequence: held.sequence, entry: first)))
                        out += state.waiting
                        out.append(.send(id, .ordered(sequence: sequence, entry: second)))
                        exchanged = (first.order, second.order)
                        state.held = nil
                        state.waiting = []
                        state.done = true
                    case let .send(id, _) where id == held.connection:
                        state.waiting.append(directive)
                    case let .close(id) where id == held.connection:
                        // Going anyway: what was held goes first.
                        out.append(.send(id, .ordered(sequence: held.sequence, entry: held.entry)))
                        out += state.waiting
                        out.append(directive)
                        state.held = nil
                        state.waiting = []
                    default:
                        out.append(directive)
                    }
                } else if case let .send(id, .ordered(sequence, entry)) = directive, victimConnections.contains(id) {
                    state.held = (id, sequence, entry)
                } else {
                    out.append(directive)
                }
            }
        }
        directives = out
        if let exchanged {
            say("exchanged \(exchanged.0) \(exchanged.1)")
        }
    }
}

/// Writes `line` to standard output at once (unbuffered, as the test reads it).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

var victim: String?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    if argument == "--victim" { victim = arguments.popFirst() }
}
guard let victim else {
    FileHandle.standardError.write(Data("usage: TandemDivergentRelay --victim NAME\n".utf8))
    exit(64)
}
let exchanger = Exchanger(victim: victim)
let server = try RelayServer(address: try SocketAddress(host: "127.0.0.1", port: 0))
server.directiveHook = { directives, core in exchanger.rewrite(&directives, core: core) }
server.start()
say("listening 127.0.0.1:\(server.port)")
while let line = readLine() {
    if line.trimmingCharacters(in: .whitespaces) == "swap" { exchanger.arm() }
}
// Standard input closed: the test is over.
server.stop()
