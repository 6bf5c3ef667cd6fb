#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// Clean exits while watching: `SIGINT`, `SIGTERM` and `SIGHUP` leave the
/// session properly, the way `q` does: the first one calls `leave` (the relay tells the others at
/// once; the watch then ends as after `q`: mpv quit, the terminal restored, the departure
/// delivered before the process exits). A second signal while that is under way exits at once
/// with 128 + its number, the terminal restored to the mode it had when this was installed
/// (mpv, if any, dies with us: `MpvProcess` sets `PR_SET_PDEATHSIG`).
///
/// Install it before the terminal goes into raw mode, and `cancel()` it once the watch is over.
final class ExitSignals: Sendable {
    /// The signals handled, with their names.
    static let handled: [(Int32, String)] = [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP")]

    private struct State: @unchecked Sendable {
        var sources: [any DispatchSourceSignal] = []
        var received: String?
        var terminal: termios?
    }

    private let state = Mutex(State())

    /// Takes the three signals from now on: the first calls `leave` with its name.
    init(leave: @escaping @Sendable (String) -> Void) {
        let queue = DispatchQueue(label: "tandem-exit-signals")
        var saved = termios()
        let terminal: termios? = isatty(0) != 0 && tcgetattr(0, &saved) == 0 ? saved : nil
        var sources: [any DispatchSourceSignal] = []
        for (number, name) in Self.handled {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [weak self] in self?.received(number, name, leave: leave) }
            sources.append(source)
        }
        state.withLock {
            $0.sources = sources
            $0.terminal = terminal
        }
        for source in sources { source.resume() }
    }

    /// The name of the first signal received, if any.
    var received: String? { state.withLock { $0.received } }

    private func received(_ number: Int32, _ name: String, leave: @Sendable (String) -> Void) {
        let (first, terminal) = state.withLock { state -> (Bool, termios?) in
            defer { if state.received == nil { state.received = name } }
            return (state.received == nil, state.terminal)
        }
        if first {
            leave(name)
            return
        }
        if var terminal { tcsetattr(0, TCSANOW, &terminal) }
        _exit(128 + number)
    }

    /// Stops taking the signals and gives them back their default actions.
    func cancel() {
        let sources = state.withLock { state -> [any DispatchSourceSignal] in
            defer { state.sources = [] }
            return state.sources
        }
        for source in sources { source.cancel() }
        if !sources.isEmpty {
            for (number, _) in Self.handled { signal(number, SIG_DFL) }
        }
    }

    deinit { cancel() }
}
