#if canImport(Glibc)
import Glibc
#endif
import CTandemSystem
import Foundation
import TandemNet

/// The relay `tandem host` runs as a process of its own (`tandem serve` with the hidden flags
/// `--idle-exit SECONDS --record PATH`), so that the session outlives its host, even a `SIGKILL`:
/// the relay is a session leader (its own session and process group, no controlling terminal),
/// so neither the host's death nor the terminal's signals reach it, and it exits a while after
/// its last session ended (`defaultLinger`, or the host's `--relay-linger`).
///
/// How a later `tandem host` on the same port knows that the relay there is ours and alive: the
/// relay writes a record, `relay-PORT.json` (its pid, port and session epoch), in a directory
/// only this user may enter (`$XDG_RUNTIME_DIR/tandem`, else `/tmp/tandem-UID`, mode 0700, ours),
/// and removes it before it exits. A record is believed when its pid runs as us (`kill(pid, 0)`)
/// with a command line of `tandem serve` naming that very record, and its port accepts a TCP
/// connection on loopback. Anything else (no record, a stale one, a port held by a stranger)
/// starts a relay of our own; a port held by a stranger then fails with one clear line.
///
/// Only its hosts create sessions there: the relay makes a creation key as it starts
/// (`RelayCreationKey`), writes it beside its record (`relay-PORT.key`, 0600, in the same
/// directory), and refuses a creation that does not prove it; anyone with an invite joins as
/// before. Its idle count goes by sessions alone, so a stranger who keeps connecting keeps
/// nothing alive. A host that reuses a live relay touches its record, which restarts that count
/// (`ServeCommand`), so the relay gives its new host its whole linger to start a session; only
/// a relay that decided to exit in the same quarter second as the touch could still go (the host
/// then fails to connect, one line).
///
/// A host that fails (mpv cannot run, the session cannot start) releases the relay it started
/// (`release(_:)`): the relay then exits as soon as it holds no session, without its linger, so
/// that nothing the failed command started is left running.
enum DetachedRelay {
    /// What a detached relay writes about itself.
    struct Record: Codable, Equatable {
        /// The relay's process.
        var pid: Int32
        /// Its port, TCP and UDP.
        var port: UInt16
        /// Its session clock's offset from the raw monotonic clock (ns), so that a host on this
        /// machine derives the session clock exactly instead of probing it.
        var epoch: Int64
    }

    /// A relay to use: where, and its session clock.
    struct Relay {
        /// Its port.
        var port: UInt16
        /// Its session clock's offset (ns) from the raw monotonic clock.
        var epoch: Int64
        /// Whether this host started it (false: an earlier host's, reused).
        var started: Bool
        /// Its process.
        var pid: Int32
        /// The key that creating a session there proves (nil for a relay that has none).
        var creationKey: [UInt8]?
    }

    /// How long a relay with no session lives on, unless its host says otherwise.
    static let defaultLinger = 10.0

    /// The directory of the records: `$XDG_RUNTIME_DIR/tandem`, else `/tmp/tandem-UID`; created
    /// 0700 if missing; nil when it exists but is not ours alone.
    static func directory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let base = environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 }
        let path = base.map { $0 + "/tandem" } ?? "/tmp/tandem-\(getuid())"
        mkdir(path, 0o700)
        var status = stat()
        guard lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR, status.st_uid == getuid(),
              status.st_mode & 0o077 == 0 else { return nil }
        return path
    }

    /// The record's path for `port`.
    static func recordPath(port: UInt16, in directory: String) -> String { "\(directory)/relay-\(port).json" }

    /// The creation key's path beside the record at `path` (`.key` for `.json`).
    static func keyPath(forRecord path: String) -> String {
        (path.hasSuffix(".json") ? String(path.dropLast(5)) : path) + ".key"
    }

    /// The creation key beside the record at `path`: nil unless it is a regular file of ours,
    /// readable by us alone, of exactly `RelayCreationKey.length` bytes.
    static func readKey(forRecord path: String) -> [UInt8]? {
        let keyPath = keyPath(forRecord: path)
        var status = stat()
        guard lstat(keyPath, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_uid == getuid(),
              status.st_mode & 0o077 == 0, let data = FileManager.default.contents(atPath: keyPath),
              data.count == RelayCreationKey.length else { return nil }
        return [UInt8](data)
    }

    /// The modification time of the file at `path` (ns since the epoch), nil when it is gone.
    static func modificationTime(of path: String) -> Int64? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
    }

    /// Reads the record at `path`; nil if absent or malformed.
    static func readRecord(at path: String) -> Record? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try? JSONDecoder().decode(Record.self, from: data)
    }

    /// Writes `record` at `path` (0600, atomically: a reader never sees half a record).
    static func write(_ record: Record, at path: String) throws {
        try write(try JSONEncoder().encode(record), at: path)
    }

    /// Writes `data` at `path` (0600, atomically).
    static func write(_ data: Data, at path: String) throws {
        let temporary = path + ".\(getpid()).tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw CLIError.failure("cannot write \(temporary)")
        }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw CLIError.failure("cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Whether `record` (read from `path`) names a live relay of ours: its process runs as us
    /// with a command line of `tandem serve … --record PATH`, and its port accepts on loopback.
    static func isAlive(_ record: Record, recordedAt path: String) -> Bool {
        guard record.pid > 1, kill(record.pid, 0) == 0,
              let commandLine = FileManager.default.contents(atPath: "/proc/\(record.pid)/cmdline") else { return false }
        let words = commandLine.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        guard words.contains("serve"), let index = words.firstIndex(of: "--record"), index + 1 < words.count,
              // A relay started on port 0 was given the pattern (`PORT` for its port).
              words[index + 1].replacingOccurrences(of: "PORT", with: String(record.port)) == path else { return false }
        return accepts(port: record.port)
    }

    /// Whether a TCP connection to 127.0.0.1:`port` is accepted (then closed at once).
    private static func accepts(port: UInt16) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// The relay for `tandem host`: the live one of ours on `port` if there is one (never for
    /// port 0), else a new `tandem serve` started detached with `forwarded` (the limit flags),
    /// `bind`, the session clock at `epoch` (ns from the raw monotonic clock), and `linger`: the
    /// seconds it lives on with no session (a relay reused keeps the linger it started with).
    static func obtain(port: UInt16, bind: String, epoch: Int64, linger: Double = defaultLinger,
                       forwarded: [String]) throws(CLIError) -> Relay {
        guard let directory = directory() else {
            throw .failure("the directory for relay records (\(ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] ?? "/tmp")) is not ours alone")
        }
        if port != 0 {
            let path = recordPath(port: port, in: directory)
            if let record = readRecord(at: path), record.port == port, isAlive(record, recordedAt: path) {
                // Touched: the relay restarts its idle count, and waits for this host's session.
                utimensat(AT_FDCWD, path, nil, 0)
                return Relay(port: record.port, epoch: record.epoch, started: false, pid: record.pid,
                             creationKey: readKey(forRecord: path))
            }
        }
        return try start(port: port, bind: bind, epoch: epoch, linger: linger, forwarded: forwarded, directory: directory)
    }

    /// Starts `tandem serve` detached (its own session, standard input from /dev/null, its
    /// first output on a pipe to us until it says where it listens) and returns it.
    private static func start(port: UInt16, bind: String, epoch: Int64, linger: Double, forwarded: [String],
                              directory: String) throws(CLIError) -> Relay {
        // Port 0: the relay learns its port only once bound; it names its record after it, and
        // `--record` carries the directory's pattern with `PORT` in it.
        let recordArgument = recordPath(port: port, in: directory).replacingOccurrences(of: "relay-0.json", with: "relay-PORT.json")
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let arguments = [executable, "serve", "--port", String(port), "--bind", bind, "--session-epoch", String(epoch),
                         "--idle-exit", String(linger), "--record", recordArgument] + forwarded
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw .failure("cannot start the relay: pipe: \(String(cString: strerror(errno)))") }
        let (reading, writing) = (pipeEnds[0], pipeEnds[1])
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writing, 1)
        posix_spawn_file_actions_adddup2(&actions, writing, 2)
        tandem_spawn_close_from(&actions, 3)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        // Its own session: not in the host's process group, so a Ctrl-C or a hang-up at the
        // host's terminal does not reach it, nor does a kill of the host's group.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF) | tandem_posix_spawn_setsid)
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var environment: [UnsafeMutablePointer<CChar>?] = childEnvironment().map { strdup($0) } + [nil]
        defer { for variable in environment { free(variable) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, &argv, &environment)
        close(writing)
        defer { close(reading) }
        guard result == 0 else { throw .failure("cannot start the relay (\(executable) serve): \(String(cString: strerror(result)))") }
        let output = readUntilListening(reading, timeoutNanoseconds: 10_000_000_000)
        guard let listening = output.split(separator: "\n").first(where: { $0.hasPrefix("relay listening on ") }),
              let boundPort = listeningPort(String(listening)) else {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            // The relay's own lines start with `tandem: ` as this one will.
            let said = output.split(separator: "\n").map { $0.hasPrefix("tandem: ") ? $0.dropFirst(8) : $0 }
                .joined(separator: "; ").trimmingCharacters(in: .whitespacesAndNewlines)
            throw .failure("the relay did not start on \(bind):\(port)" + (said.isEmpty ? "" : ": " + said))
        }
        // Not reaped by us: it outlives us and is re-parented to init when we exit. Until then
        // a zombie would remain if it exited first; `reapWhenDone` collects it.
        reapWhenDone(pid)
        let key = readKey(forRecord: recordPath(port: boundPort, in: directory))
        return Relay(port: boundPort, epoch: epoch, started: true, pid: pid, creationKey: key)
    }

    /// The port in `relay listening on HOST:PORT (…)`.
    static func listeningPort(_ line: String) -> UInt16? {
        let words = line.split(separator: " ")
        guard words.count >= 4, let colon = words[3].lastIndex(of: ":") else { return nil }
        return UInt16(words[3][words[3].index(after: colon)...])
    }

    /// What the child writes until its line that says where it listens, end of stream, or the
    /// timeout.
    private static func readUntilListening(_ descriptor: Int32, timeoutNanoseconds: Int64) -> String {
        var collected: [UInt8] = []
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeoutNanoseconds)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while collected.count < 64 * 1024 {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { break }
            var poll = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = tandem_poll_nanoseconds(&poll, 1, Int64(deadline - now))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { break }
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            collected += buffer[..<count]
            let text = String(decoding: collected, as: UTF8.self)
            if text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().contains(where: { $0.hasPrefix("relay listening on ") }) {
                return text
            }
        }
        return String(decoding: collected, as: UTF8.self)
    }

    /// Reaps `pid` on a thread of its own if it exits while we run.
    private static func reapWhenDone(_ pid: pid_t) {
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
    }

    /// Tells `relay`, started by this process, to exit as soon as it holds no session rather
    /// than linger (`SIGUSR1`, which `tandem serve --idle-exit` takes so), and waits at most
    /// `timeout` seconds for its process to be gone. Whether it is gone: a relay where others
    /// still watch stays until their session ends.
    @discardableResult
    static func release(_ relay: Relay, timeout: Double = 3) -> Bool {
        guard relay.started, relay.pid > 1 else { return false }
        guard kill(relay.pid, SIGUSR1) == 0 else { return errno == ESRCH }
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeout * 1e9)
        // Reaped by `reapWhenDone` as it exits: until then `kill(pid, 0)` still finds it.
        while kill(relay.pid, 0) == 0, DispatchTime.now().uptimeNanoseconds < deadline { usleep(10_000) }
        return kill(relay.pid, 0) != 0
    }

    /// This process's environment without `TANDEM_INVITE` or `TANDEM_NATS_CREDENTIALS` (a relay
    /// of a host has no use for a secret).
    private static func childEnvironment() -> [String] {
        let secrets: Set = [InviteEnvironment.name, NATSCredentialsSource.environmentName]
        return ProcessInfo.processInfo.environment.filter { !secrets.contains($0.key) }.map { "\($0.key)=\($0.value)" }
    }
}
