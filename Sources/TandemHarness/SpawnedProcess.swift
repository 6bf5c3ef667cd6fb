#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// A child process started with `posix_spawn`: standard input from /dev/null, its output and
/// errors to files or /dev/null, every signal at its default disposition and none blocked; reaped
/// by `wait(timeout:)` or `stop(signal:)`, or when `isRunning` sees it has ended.
///
/// Not Foundation's `Process`, for daemons: it watches a child through a descriptor the child
/// inherits, and a server that closes every inherited descriptor at start (`pulseaudio` does)
/// looks ended to it; its monitoring thread then blocks in `waitpid` until the server ends, and
/// no other child of this process is seen to end meanwhile.
final class SpawnedProcess: Sendable {
    private let pid: pid_t
    /// The exit status once reaped.
    private let status = Mutex<Int32?>(nil)

    /// Starts `arguments[0]` with `arguments` and exactly `environment`.
    init(_ arguments: [String], environment: [String: String], output: String? = nil, error: String? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, error ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for variable in envp { free(variable) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, arguments[0], &actions, &attributes, &argv, &envp)
        guard result == 0 else { throw FixtureError("cannot start \(arguments[0]): \(String(cString: strerror(result)))") }
        self.pid = pid
    }

    /// Its process identifier.
    var processIdentifier: pid_t { pid }

    /// Whether it still runs (a child that ended is reaped here).
    var isRunning: Bool { reap(blocking: false) == nil }

    /// Waits at most `timeout` seconds for it to end and returns its exit status (128 + the
    /// signal when a signal ended it), or nil, with the child killed and reaped, when it had not
    /// ended by then.
    func wait(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        // Bounded by the deadline: every 2 ms.
        while Date() < deadline {
            if let status = reap(blocking: false) { return status }
            Thread.sleep(forTimeInterval: 0.002)
        }
        kill(pid, SIGKILL)
        _ = reap(blocking: true)
        return nil
    }

    /// Ends it with `signal`, then SIGKILL after 2 s, and reaps it.
    func stop(signal: Int32 = SIGTERM) {
        guard isRunning else { return }
        kill(pid, signal)
        _ = wait(timeout: 2)
    }

    private func reap(blocking: Bool) -> Int32? {
        status.withLock { status in
            if let status { return status }
            var raw: Int32 = 0
            guard waitpid(pid, &raw, blocking ? 0 : WNOHANG) == pid else { return nil }
            // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as macros.
            let signal = raw & 0x7f
            status = signal == 0 ? (raw >> 8) & 0xff : 128 + signal
            return status
        }
    }
}
