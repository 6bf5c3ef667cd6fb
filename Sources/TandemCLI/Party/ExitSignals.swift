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

    private let first: FirstSignal
    /// The signal sources, until `cancel()`.
    private let sources: Mutex<[any DispatchSourceSignal]>

    /// Takes the three signals from now on: the first calls `leave` with its name.
    init(leave: @escaping @Sendable (String) -> Void) {
        let queue = DispatchQueue(label: "tandem-exit-signals")
        var saved = termios()
        let terminal: termios? = isatty(0) != 0 && tcgetattr(0, &saved) == 0 ? saved : nil
        let first = FirstSignal(terminal: terminal, leave: leave)
        self.first = first
        let sources = Self.sources(on: queue) { number, name in first.received(number, name) }
        for source in sources { source.resume() }
        self.sources = Mutex(sources)
    }

    /// A source for each handled signal (ignored from now on but through its source), each
    /// calling `handler` on `queue`; not yet resumed.
    private static func sources(on queue: DispatchQueue,
                                handler: @escaping @Sendable (Int32, String) -> Void) -> sending [any DispatchSourceSignal] {
        handled.map { number, name in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number, name) }
            return source
        }
    }

    /// The name of the first signal received, if any.
    var received: String? { first.name.withLock { $0 } }

    /// Stops taking the signals and gives them back their default actions.
    func cancel() {
        let cancelled = sources.withLock { sources -> Bool in
            for source in sources { source.cancel() }
            defer { sources = [] }
            return !sources.isEmpty
        }
        if cancelled {
            for (number, _) in Self.handled { signal(number, SIG_DFL) }
        }
    }

    deinit { cancel() }
}

/// What a handled signal does: the first calls `leave`, a later one restores the terminal and
/// exits at once.
private final class FirstSignal: Sendable {
    /// The first signal's name, once one came.
    let name = Mutex<String?>(nil)
    /// The terminal's mode when the signals were installed, if the input is a terminal.
    let terminal: termios?
    let leave: @Sendable (String) -> Void

    init(terminal: termios?, leave: @escaping @Sendable (String) -> Void) {
        self.terminal = terminal
        self.leave = leave
    }

    func received(_ number: Int32, _ signalName: String) {
        let isFirst = name.withLock { name -> Bool in
            defer { if name == nil { name = signalName } }
            return name == nil
        }
        if isFirst {
            leave(signalName)
            return
        }
        if var terminal { tcsetattr(0, TCSANOW, &terminal) }
        _exit(128 + number)
    }
}
