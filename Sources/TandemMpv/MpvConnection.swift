#if canImport(Glibc)
import Glibc
#endif
import CTandemSystem
import Foundation
import Synchronization
import TandemNet
import TandemClock
import TandemMediaTypes

/// A client of mpv's JSON IPC (`--input-ipc-server`): newline-delimited JSON over a UNIX-domain
/// socket, each command matched to its reply by `request_id`, and everything else (property
/// changes, seeks, restarts) delivered as events.
///
/// Any number of connections may talk to one mpv at once, which is how other tools watch and
/// control an mpv that Tandem drives. A thread of its own reads the socket; commands may be sent
/// from any task.
///
/// Given the process it expects at the other end (`expectedPeer`: the mpv that Tandem started),
/// a connection is used only once the socket proves to be that mpv's: the socket file belongs
/// to this user, and the listening end's credentials (`SO_PEERCRED`) name this user and that
/// process or one of its descendants. An impostor's socket at a shared path is refused with a
/// clear error. Replies are bounded: a line longer than `maximumLineLength` ends the connection
/// with an error instead of growing a buffer, and a `request_id` that is no id of ours is
/// ignored.
///
/// ```swift
/// let mpv = try await MpvConnection.connect(path: "/tmp/mpv.sock", timeout: .seconds(5))
/// try await mpv.observe("pause")
/// try await mpv.set("pause", false)
/// for await event in mpv.events where event.propertyName == "pause" { print(event.propertyValue) }
/// ```
public final class MpvConnection: Sendable {
    /// mpv's answer to one command, with when it was asked and answered (raw monotonic ns), so
    /// that a caller can place a reading at the round trip's midpoint.
    public struct Reply: Sendable, Equatable {
        /// The `data` field (`null` for commands that return nothing).
        public let value: MpvValue
        /// Just before the command was written.
        public let sentAt: Int64
        /// When the reply was read.
        public let receivedAt: Int64
        /// The round trip's midpoint: the best guess of when mpv answered.
        public var midpoint: Int64 { sentAt + (receivedAt - sentAt) / 2 }
    }

    /// The longest line read from mpv (1 MiB); mpv's replies and events are far shorter.
    public static let maximumLineLength = 1 << 20

    /// The socket path.
    public let path: String
    /// How long a command waits for its reply before failing, in nanoseconds.
    public let replyTimeout: Int64

    private struct Pending {
        let command: String
        let sentAt: Int64
        let deadline: Int64
        let answer: @Sendable (Result<Reply, any Error>) -> Void
    }

    private struct State {
        var nextRequest = 1
        var nextObservation = 1
        var pending: [Int: Pending] = [:]
        var readers: [Int: AsyncStream<MpvEvent>.Continuation] = [:]
        var handlers: [@Sendable (MpvEvent?) -> Void] = []
        var nextReader = 0
        var closed: MpvError?
    }

    private let socket: UnixStreamSocket
    private let state = Mutex(State())
    private let writeLock = Mutex(())
    /// The thread reading replies and events, set once the connection is made.
    private let reader = Mutex<WorkerThread?>(nil)

    /// Connects to the mpv listening at `path` (one attempt). With `expectedPeer`, the socket
    /// must be that process's (or a descendant's) and this user's, or the connection is refused
    /// (`isRefusal(_:)` tells that error from others).
    public init(path: String, replyTimeout: Duration = .seconds(5), expectedPeer: pid_t? = nil) throws(MpvError) {
        self.path = path
        self.replyTimeout = Int64(replyTimeout.components.seconds) * 1_000_000_000 + replyTimeout.components.attoseconds / 1_000_000_000
        do {
            socket = try UnixStreamSocket(connectingTo: path)
        } catch {
            throw .connect(path, error.description)
        }
        if let expectedPeer {
            // Nothing has been sent or read yet: an impostor learns nothing but that we came.
            if let refusal = MpvConnection.refusal(of: socket, at: path, expecting: expectedPeer) {
                socket.shutdown()
                throw .connect(path, refusal)
            }
        }
        let thread = WorkerThread(name: "tandem-mpv-ipc") { [self] in readLoop() }
        reader.withLock { $0 = thread }
    }

    /// Connects to the mpv that will listen at `path`, trying every 20 ms for up to `timeout`
    /// (mpv creates its socket a moment after it starts). `stillStarting` is asked between
    /// attempts; false (mpv exited, say) stops trying at once. With `expectedPeer`, a socket
    /// that is not that process's is refused at once, without trying again.
    public static func connect(path: String, timeout: Duration, replyTimeout: Duration = .seconds(5), expectedPeer: pid_t? = nil,
                               stillStarting: @Sendable () -> Bool = { true }) async throws -> MpvConnection {
        let attempts = max(1, Int(timeout / .milliseconds(20)))
        var lastError = MpvError.connect(path, "nothing listens there")
        for _ in 0..<attempts {
            do {
                return try MpvConnection(path: path, replyTimeout: replyTimeout, expectedPeer: expectedPeer)
            } catch {
                if isRefusal(error) { throw error }
                lastError = error
            }
            guard stillStarting() else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw lastError
    }

    /// The words every refusal of an untrusted socket starts with.
    static let refusalPrefix = "refused: "

    /// Whether `error` is the refusal of a socket that is not the expected mpv's.
    public static func isRefusal(_ error: MpvError) -> Bool {
        error.detail.hasPrefix(refusalPrefix)
    }

    /// Why the socket connected at `path` is not `expected`'s, or nil when it is: the file must
    /// be a socket owned by this user, and its listener this user's and `expected` or one of
    /// its descendants.
    static func refusal(of socket: UnixStreamSocket, at path: String, expecting expected: pid_t) -> String? {
        let user = geteuid()
        var status = stat()
        guard lstat(path, &status) == 0 else { return refusalPrefix + "cannot check the socket file: \(String(cString: strerror(errno)))" }
        guard status.st_mode & S_IFMT == S_IFSOCK else { return refusalPrefix + "it is not a socket" }
        guard status.st_uid == user else {
            return refusalPrefix + "the socket file belongs to user \(status.st_uid), not to this user (\(user))"
        }
        var credentials = tandem_peer_credentials()
        guard tandem_get_peer_credentials(socket.descriptor, &credentials) == 0 else {
            return refusalPrefix + "cannot read its peer credentials: \(String(cString: strerror(errno)))"
        }
        guard credentials.uid == user else {
            return refusalPrefix + "it is served by user \(credentials.uid), not by this user (\(user))"
        }
        guard isProcess(credentials.pid, descendantOf: expected) else {
            return refusalPrefix + "it is served by process \(credentials.pid), not by the mpv Tandem started (process \(expected))"
        }
        return nil
    }

    /// Whether `pid` is `ancestor` or descends from it, by the parents `/proc` names (at most
    /// 32 generations up).
    public static func isProcess(_ pid: pid_t, descendantOf ancestor: pid_t) -> Bool {
        var current = pid
        for _ in 0..<32 {
            if current == ancestor { return true }
            guard current > 1, let parent = parent(of: current) else { return false }
            current = parent
        }
        return false
    }

    /// The parent of `pid`, from `/proc/PID/stat` (`PID (COMM) STATE PPID …`; the name may hold
    /// spaces and parentheses, so the fields are read after its last `)`).
    private static func parent(of pid: pid_t) -> pid_t? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return nil }
        let text = String(decoding: data.prefix(4096), as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 1 else { return nil }
        return pid_t(fields[1])
    }

    deinit {
        // The reader thread holds the connection until its loop ends, so this runs after it.
        finish(with: .disconnected(path, "released"))
    }

    /// Closes the connection: pending commands fail, event streams finish. mpv goes on running.
    public func close() {
        finish(with: .disconnected(path, "closed"))
        socket.shutdown()
        reader.withLock { $0 }?.join()
    }

    /// Whether the connection is over (closed here, or mpv went away).
    public var isClosed: Bool { state.withLock { $0.closed != nil } }

    /// Everything mpv announces from now on, in order; the stream finishes when the connection
    /// does. Each call is a subscriber of its own.
    public var events: AsyncStream<MpvEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: MpvEvent.self)
        let id: Int? = state.withLock { state in
            guard state.closed == nil else { return nil }
            let id = state.nextReader
            state.nextReader += 1
            state.readers[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.readers.removeValue(forKey: id) }
        }
        return stream
    }

    // MARK: Commands

    /// Runs `arguments` as an mpv command (`["seek", 10, "absolute", "exact"]`) and returns its
    /// reply; throws mpv's own error text when it refuses, and a timeout when it does not answer.
    @discardableResult
    public func command(_ arguments: [MpvValue]) async throws -> Reply {
        try await withCheckedThrowingContinuation { continuation in
            send(arguments) { continuation.resume(with: $0) }
        }
    }

    /// Writes `arguments` as an mpv command now, on the caller's thread, and hands its reply (or
    /// mpv's refusal, a timeout, the connection's end) to `answer`, on the connection's reader
    /// thread: for a shell that must not wait for mpv.
    public func send(_ arguments: [MpvValue], answer: @escaping @Sendable (Result<Reply, any Error>) -> Void) {
        let text = MpvValue.array(arguments).description
        let now = HostInstant.now().nanoseconds
        let id: Int? = state.withLock { state in
            guard state.closed == nil else { return nil }
            let id = state.nextRequest
            state.nextRequest += 1
            state.pending[id] = Pending(command: text, sentAt: now, deadline: now + replyTimeout, answer: answer)
            return id
        }
        guard let id else {
            answer(.failure(MpvError.disconnected(path, "before \(text)")))
            return
        }
        let line = MpvValue.object(["command": .array(arguments), "request_id": .number(Double(id))]).description + "\n"
        do {
            try writeLock.withLock { _ in try socket.writeAll(Array(line.utf8), timeout: replyTimeout) }
        } catch {
            let failed = state.withLock { $0.pending.removeValue(forKey: id) }
            failed?.answer(.failure(MpvError.disconnected(path, "writing \(text): \(error)")))
        }
    }

    /// Calls `handler` with every event mpv announces from now on, on the connection's reader
    /// thread as it is read, and with nil once the connection has ended.
    public func onEvent(_ handler: @escaping @Sendable (MpvEvent?) -> Void) {
        let ended = state.withLock { state in
            if state.closed == nil { state.handlers.append(handler) }
            return state.closed != nil
        }
        if ended { handler(nil) }
    }

    /// Sets `property` to `value` (`set_property`).
    @discardableResult
    public func set(_ property: String, _ value: MpvValue) async throws -> Reply {
        try await command(["set_property", .string(property), value])
    }

    /// The value of `property` (`get_property`).
    public func get(_ property: String) async throws -> MpvValue {
        try await command(["get_property", .string(property)]).value
    }

    /// Asks mpv to announce every change of `property` as a `property-change` event (and its
    /// current value at once).
    public func observe(_ property: String) async throws {
        let id = state.withLock { state in
            defer { state.nextObservation += 1 }
            return state.nextObservation
        }
        try await command(["observe_property", .number(Double(id)), .string(property)])
    }

    // MARK: Reading

    private func readLoop() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var line: [UInt8] = []
        // Bounded by the connection's life: every pass either reads, times out (and checks for
        // closing and overdue replies), or ends the loop.
        while state.withLock({ $0.closed == nil }) {
            do {
                guard try socket.waitUntilReadable(timeout: 100_000_000) else {
                    expireOverdueReplies()
                    continue
                }
                guard let count = try socket.read(into: &buffer) else { continue }
                guard count > 0 else {
                    finish(with: .disconnected(path, "mpv closed it"))
                    return
                }
                let receivedAt = HostInstant.now().nanoseconds
                for byte in buffer[..<count] {
                    if byte == UInt8(ascii: "\n") {
                        handle(line: line, receivedAt: receivedAt)
                        line.removeAll(keepingCapacity: line.count <= 65_536)
                    } else {
                        guard line.count < Self.maximumLineLength else {
                            finish(with: .malformed("a line of more than \(Self.maximumLineLength) bytes",
                                                    "mpv never sends one; the connection is closed"))
                            socket.shutdown()
                            return
                        }
                        line.append(byte)
                    }
                }
                expireOverdueReplies()
            } catch {
                finish(with: .disconnected(path, error.description))
                return
            }
        }
    }

    private func handle(line: [UInt8], receivedAt: Int64) {
        guard !line.isEmpty else { return }
        let message: MpvValue
        do {
            message = try JSONDecoder().decode(MpvValue.self, from: Data(line))
        } catch {
            // One bad line does not end the conversation; mpv never sends one in practice.
            broadcast(MpvEvent(name: "malformed", message: .string(String(decoding: line, as: UTF8.self)), receivedAt: receivedAt))
            return
        }
        if let id = message["request_id"], message["event"] == nil {
            // Only ids this connection handed out match; anything else (negative, huge,
            // fractional, not a number) matches nothing and is dropped.
            guard let key = id.exactInteger, key > 0 else { return }
            let pending = state.withLock { $0.pending.removeValue(forKey: key) }
            guard let pending else { return }
            let error = message["error"]?.string ?? "success"
            if error == "success" {
                pending.answer(.success(Reply(value: message["data"] ?? .null, sentAt: pending.sentAt, receivedAt: receivedAt)))
            } else {
                pending.answer(.failure(MpvError.command(pending.command, error)))
            }
        } else if let name = message["event"]?.string {
            broadcast(MpvEvent(name: name, message: message, receivedAt: receivedAt))
        }
    }

    private func broadcast(_ event: MpvEvent) {
        let (readers, handlers) = state.withLock { (Array($0.readers.values), $0.handlers) }
        for handler in handlers { handler(event) }
        for reader in readers { reader.yield(event) }
    }

    private func expireOverdueReplies() {
        let now = HostInstant.now().nanoseconds
        let overdue = state.withLock { state in
            let ids = state.pending.filter { $0.value.deadline <= now }.map(\.key)
            return ids.compactMap { state.pending.removeValue(forKey: $0) }
        }
        for pending in overdue { pending.answer(.failure(MpvError.timeout(pending.command))) }
    }

    /// Ends the connection once: fails what is pending, finishes every event stream.
    private func finish(with error: MpvError) {
        let (pending, readers, handlers) = state.withLock { state -> ([Pending], [AsyncStream<MpvEvent>.Continuation], [@Sendable (MpvEvent?) -> Void]) in
            guard state.closed == nil else { return ([], [], []) }
            state.closed = error
            defer {
                state.pending = [:]
                state.readers = [:]
                state.handlers = []
            }
            return (Array(state.pending.values), Array(state.readers.values), state.handlers)
        }
        for request in pending { request.answer(.failure(error)) }
        for reader in readers { reader.finish() }
        for handler in handlers { handler(nil) }
    }
}
