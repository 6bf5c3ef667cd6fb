#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// A child process of the audio bench (`ffmpeg`, `tandem … --help`), started with `posix_spawn` and reaped with `waitpid` on its own pid: nothing depends on a
/// dispatch queue being free to notice that it exited, so no wait can hang on a busy machine.
final class AudioChildProcess: Sendable {
    /// Its pid.
    let pid: pid_t
    private let status = Mutex<Int32?>(nil)

    /// Starts `executable` with `arguments`, this process's environment plus `environment`, its
    /// standard input from /dev/null and its standard output and error onto `output` and `errors`
    /// (descriptors, /dev/null when nil).
    init(executable: String, arguments: [String], environment: [String: String], output: Int32? = nil, errors: Int32? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if let output { posix_spawn_file_actions_adddup2(&actions, output, 1) } else { posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0) }
        if let errors { posix_spawn_file_actions_adddup2(&actions, errors, 2) } else { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
        let variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0.key)=\($0.value)" }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, nil, argv, envp)
        guard result == 0 else {
            throw BenchmarkError("cannot start \(executable): \(String(cString: strerror(result)))")
        }
        pid = child
    }

    deinit {
        if isRunning {
            kill(pid, SIGKILL)
            _ = wait(timeout: 2)
        }
    }

    /// Its exit status (a signal's number plus 128 when a signal ended it) once it has exited.
    var exitStatus: Int32? {
        status.withLock { saved in
            if let saved { return saved }
            var raw: Int32 = 0
            let reaped = waitpid(pid, &raw, WNOHANG)
            if reaped == pid {
                let signal = raw & 0x7f
                saved = signal == 0 ? (raw >> 8) & 0xff : 128 + signal
            } else if reaped < 0 {
                saved = -1
            }
            return saved
        }
    }

    /// Whether it still runs.
    var isRunning: Bool { exitStatus == nil }

    /// Waits at most `timeout` seconds for it to exit; its status, or nil when it still runs.
    func wait(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let status = exitStatus { return status }
            if Date() >= deadline { return nil }
            usleep(2_000)
        }
    }

    /// Sends SIGTERM, waits at most `grace` seconds, then SIGKILL; reaps it.
    func stop(grace: Double = 3) {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        if wait(timeout: grace) == nil {
            kill(pid, SIGKILL)
            _ = wait(timeout: 5)
        }
    }

    /// The full path of `command` on the PATH (or `command` itself when it names a path), or nil.
    static func find(_ command: String) -> String? {
        if command.contains("/") { return FileManager.default.isExecutableFile(atPath: command) ? command : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(command)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `executable` to its end (at most `timeout` s, then killed): its status and what it
    /// printed on standard output and error.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String],
                    timeout: Double) throws -> (status: Int32, output: String, errors: String) {
        var outputPipe: [Int32] = [0, 0]
        var errorPipe: [Int32] = [0, 0]
        guard pipe(&outputPipe) == 0, pipe(&errorPipe) == 0 else {
            throw BenchmarkError("cannot make a pipe: \(String(cString: strerror(errno)))")
        }
        // Not inherited by other children started meanwhile (the copies onto 1 and 2 are).
        for descriptor in outputPipe + errorPipe { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        let child: AudioChildProcess
        do {
            child = try AudioChildProcess(executable: executable, arguments: arguments, environment: environment,
                                          output: outputPipe[1], errors: errorPipe[1])
        } catch {
            for descriptor in outputPipe + errorPipe { close(descriptor) }
            throw error
        }
        close(outputPipe[1])
        close(errorPipe[1])
        defer {
            close(outputPipe[0])
            close(errorPipe[0])
        }
        var collected = [Data(), Data()]
        var open = [true, true]
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while open.contains(true), Date() < deadline {
            var descriptors = [pollfd(fd: outputPipe[0], events: Int16(POLLIN), revents: 0), pollfd(fd: errorPipe[0], events: Int16(POLLIN), revents: 0)]
            for index in 0..<2 where !open[index] { descriptors[index].fd = -1 }
            guard poll(&descriptors, 2, 10) >= 0 || errno == EINTR else { break }
            for index in 0..<2 where open[index] && descriptors[index].revents != 0 {
                let count = read(descriptors[index].fd, &buffer, buffer.count)
                if count > 0 { collected[index].append(contentsOf: buffer[0..<count]) } else if count == 0 || errno != EINTR { open[index] = false }
            }
        }
        guard let status = child.wait(timeout: max(0.1, deadline.timeIntervalSinceNow)) else {
            child.stop(grace: 0.5)
            throw BenchmarkError("\(URL(fileURLWithPath: executable).lastPathComponent) \(arguments.joined(separator: " ")) took more than \(Int(timeout)) s")
        }
        return (status, String(decoding: collected[0], as: UTF8.self), String(decoding: collected[1], as: UTF8.self))
    }
}
