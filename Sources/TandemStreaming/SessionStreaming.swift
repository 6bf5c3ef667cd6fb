#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Tandem
import TandemIdentity

/// Streams media between a session's participants, sealed end to end: a participant that holds
/// an item (`hold(file:identity:)`) serves ranges of it to those that ask; one that lacks it
/// reads it (`item(identity:)`) from the holders, the host first, then any other that
/// announced it holds it. Everything travels as signed, sealed session bodies of kind
/// `BodyKind.mediaStream`, addressed to one participant, so that the relay reads nothing.
///
/// The decisions are its cores' (`StreamReaderCore` for each item read, `StreamServerCore` for
/// what it serves); this shell carries them out: one serial queue for the server's decisions and
/// the session's messages, one for reading the held files and sending chunks (so that a holder's
/// serving never runs on its own player's threads), and each item's lock for its reads.
public final class SessionStreaming: Sendable {
    /// The cores' limits.
    public struct Configuration: Sendable, Hashable {
        /// Each item's reader.
        public var reader = StreamReaderCore.Configuration()
        /// What this participant serves.
        public var server = StreamServerCore.Configuration()

        /// The defaults.
        public init() {}
    }

    private struct Announcement: Sendable {
        var items: [HeldItem]
        var host: Bool
    }

    private struct Waiter {
        var name: String
        var continuation: CheckedContinuation<String?, Never>
    }

    private struct State {
        var server: StreamServerCore
        var files: [String: Int32] = [:]
        var heldNames: [String: String] = [:]
        var waiters: [UUID: Waiter] = [:]
        var items: [UInt64: StreamedItem] = [:]
        var nextItem: UInt64 = 1
        var announcements: [UUID: Announcement] = [:]
        var present: Set<UUID> = []
        var serveWake: Int64?
        var closed = false
        var inquired = false
    }

    private let configuration: Configuration
    private let localID: UUID
    private let isHost: Bool
    private let sendBody: @Sendable ([UInt8], UUID?) throws(GroupSessionError) -> Void
    private let now: @Sendable () -> Int64
    private let state: Mutex<State>
    private let control = DispatchQueue(label: "tandem.streaming")
    private let serving = DispatchQueue(label: "tandem.streaming.serve", qos: .utility)
    private let eventSink: Mutex<EventSink?> = Mutex(nil)
    /// The tasks that read the session's stream bodies and participants, cancelled by `close()`.
    private let tasks = Mutex<[Task<Void, Never>]>([])

    /// Streaming in `session` (joined or not yet: it starts serving and reading once joined).
    /// `now` is the clock its timeouts and rate run on (monotonic nanoseconds by default).
    public init<Activity: GroupActivity>(session: GroupSession<Activity>, configuration: Configuration = Configuration(),
                                         now: @escaping @Sendable () -> Int64 = { Int64(DispatchTime.now().uptimeNanoseconds) }) {
        self.configuration = configuration
        localID = session.localParticipant.id
        isHost = session.isLocallyInitiated
        sendBody = { payload, recipient throws(GroupSessionError) in try session.sendStreamBody(payload, to: recipient) }
        self.now = now
        state = Mutex(State(server: StreamServerCore(configuration: configuration.server)))
        let bodies = session.streamBodies()
        var tasks = [Task<Void, Never>]()
        tasks.append(Task { [weak self] in
            for await (payload, sender) in bodies {
                guard let self else { return }
                guard let message = StreamMessage(decoding: payload) else { continue }
                self.control.async { self.receive(message, from: sender) }
            }
        })
        tasks.append(Task { [weak self] in
            for await participants in session.$activeParticipants.values {
                guard let self else { return }
                let ids = Set(participants.map(\.id))
                self.control.async { self.participantsChanged(ids) }
            }
        })
        self.tasks.withLock { $0 = tasks }
    }

    deinit { close() }

    /// Calls `handler` with what happens to streamed items (suspensions, rejected holders).
    public func onEvent(_ handler: @escaping @Sendable (StreamEvent) -> Void) {
        eventSink.withLock { $0 = EventSink(handle: handler) }
    }

    /// Serves the file at `path`, whose content identity is `identity`, to anyone who asks, and
    /// tells everyone that this participant holds it, as the group's item `name`.
    public func hold(file path: String, identity: String, name: String) throws(StreamingError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path, String(cString: strerror(errno))) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            Glibc.close(descriptor)
            throw .unreadable(path, "not a regular file")
        }
        let content = ContentIdentity.content(of: identity)
        let replaced = state.withLock { state -> Int32? in
            state.server.hold(content, size: Int64(status.st_size))
            state.heldNames[content] = name
            defer { state.files[content] = descriptor }
            return state.files[content]
        }
        if let replaced { Glibc.close(replaced) }
        announce(to: nil)
    }

    /// The item whose content identity is `identity`, read from its holders: a
    /// `SeekableByteSource` for a player (mpv reads it through `MpvByteServer`). Throws when the identity
    /// names no size.
    public func item(identity: String) throws(StreamingError) -> StreamedItem {
        let index = state.withLock { state in
            defer { state.nextItem += 1 }
            return state.nextItem
        }
        guard let core = StreamReaderCore(identity: identity, configuration: configuration.reader, firstRequestID: index << 40) else {
            throw .noSize(identity)
        }
        let item = StreamedItem(core: core, send: { [weak self] message, holder in self?.send(message, to: holder) }, now: now,
                                events: { [weak self] event in self?.emit(event) })
        // Registered and the announcements copied at once: one that arrives later reaches the item
        // through the table, one before it through the copy, none in between.
        let announced = state.withLock { state in
            state.items[index] = item
            return state.announcements
        }
        for (holder, announcement) in announced where announcement.items.contains(where: { ContentIdentity.sameContent($0.identity, identity) }) {
            item.holder(holder, host: announcement.host)
        }
        return item
    }

    /// Stops reading `item` (its reads throw) and forgets it.
    public func release(_ item: StreamedItem) {
        item.close()
        state.withLock { state in state.items = state.items.filter { $0.value !== item } }
    }

    /// Whether some participant other than this one said it holds `identity`.
    public func isHeldElsewhere(_ identity: String) -> Bool {
        state.withLock { state in
            state.announcements.contains { $0.value.items.contains { ContentIdentity.sameContent($0.identity, identity) } }
        }
    }

    /// The content identity that a holder announced for the group's item `name` (the host's
    /// word first), waiting for at most `timeout` for an announcement; nil when none came.
    public func announcedIdentity(of name: String, timeout: Duration = .seconds(5)) async -> String? {
        let id = UUID()
        return await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            let known = state.withLock { state -> String? in
                if let found = Self.identity(of: name, in: state.announcements) { return found }
                state.waiters[id] = Waiter(name: name, continuation: continuation)
                return nil
            }
            if let known {
                continuation.resume(returning: known)
                return
            }
            control.asyncAfter(deadline: .now() + .nanoseconds(Int(timeout.components.seconds) * 1_000_000_000
                                                                + Int(timeout.components.attoseconds / 1_000_000_000))) { [weak self] in
                self?.state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: nil)
            }
        }
    }

    private static func identity(of name: String, in announcements: [UUID: Announcement]) -> String? {
        let ordered = announcements.values.sorted { $0.host && !$1.host }
        return ordered.lazy.compactMap { $0.items.first { $0.name == name }?.identity }.first
    }

    /// Bytes served to others so far.
    public var bytesServed: Int64 { state.withLock { $0.server.bytesServed } }

    /// Stops serving and reading: files closed, items' reads throw.
    public func close() {
        let (files, items) = state.withLock { state -> ([Int32], [StreamedItem]) in
            guard !state.closed else { return ([], []) }
            state.closed = true
            defer {
                state.files = [:]
                state.items = [:]
            }
            return (Array(state.files.values), Array(state.items.values))
        }
        for task in tasks.withLock({ $0 }) { task.cancel() }
        for item in items { item.close() }
        for waiter in state.withLock({ state in defer { state.waiters = [:] }; return Array(state.waiters.values) }) {
            waiter.continuation.resume(returning: nil)
        }
        // After the chunks already handed to the serving queue (they read these descriptors).
        serving.async { for descriptor in files { Glibc.close(descriptor) } }
    }

    // MARK: The control queue

    private func emit(_ event: StreamEvent) {
        eventSink.withLock { $0 }?.handle(event)
    }

    /// Who hears the events.
    /// Held in a struct: a bare closure held by the generic `Mutex` is stored in its generic
    /// form, and every access under the lock wraps it in a conversion each way and writes it
    /// back, one closure deeper each time, until a call overflows the stack.
    private struct EventSink: Sendable {
        let handle: @Sendable (StreamEvent) -> Void
    }

    private func send(_ message: StreamMessage, to recipient: UUID?) {
        try? sendBody(message.encoded, recipient)
    }

    private func announce(to recipient: UUID?) {
        let held = state.withLock { state in
            state.server.held.keys.sorted().map { HeldItem(name: state.heldNames[$0] ?? "", identity: $0) }
        }
        guard !held.isEmpty else { return }
        send(.holding(held, host: isHost), to: recipient)
    }

    private func receive(_ message: StreamMessage, from sender: UUID) {
        guard sender != localID else { return }
        switch message {
        case .request(let id, let identity, let offset, let length):
            let directives = state.withLock { $0.server.onRequest(from: sender, id: id, identity: identity, offset: offset, length: length) }
            for directive in directives {
                switch directive {
                case .refuse(let refusal, let asker): send(refusal, to: asker)
                case .serve: serve()
                }
            }
        case .chunk(let id, _, _), .refusal(let id, _):
            let item = state.withLock { $0.items[id >> 40] }
            item?.receive(message, from: sender)
        case .inquiry:
            announce(to: sender)
        case .holding(let held, let host):
            let (items, ready) = state.withLock { state -> ([StreamedItem], [(Waiter, String)]) in
                state.announcements[sender] = Announcement(items: held, host: host)
                var ready: [(Waiter, String)] = []
                for (id, waiter) in state.waiters {
                    if let identity = Self.identity(of: waiter.name, in: state.announcements) {
                        ready.append((waiter, identity))
                        state.waiters[id] = nil
                    }
                }
                return (Array(state.items.values), ready)
            }
            for (waiter, identity) in ready { waiter.continuation.resume(returning: identity) }
            for item in items { item.receive(message, from: sender) }
        }
    }

    private func participantsChanged(_ ids: Set<UUID>) {
        let (gone, arrived, items, inquire) = state.withLock { state -> (Set<UUID>, Set<UUID>, [StreamedItem], Bool) in
            // Joined: ask who holds what (announcements made before this reader listened are lost).
            let inquire = !state.inquired && ids.contains(localID)
            if inquire { state.inquired = true }
            let gone = state.present.subtracting(ids)
            let arrived = ids.subtracting(state.present).subtracting([localID])
            state.present = ids
            for id in gone {
                state.announcements[id] = nil
                state.server.onAskerGone(id)
            }
            return (gone, arrived, Array(state.items.values), inquire)
        }
        if inquire { send(.inquiry, to: nil) }
        for id in gone { for item in items { item.holderGone(id) } }
        for id in arrived { announce(to: id) }
    }

    /// Takes the chunks the server's rate allows now and hands them to the serving queue.
    private func serve() {
        let (directives, files) = state.withLock { state in
            state.serveWake = nil
            return (state.server.nextChunks(now: now()), state.files)
        }
        var chunks: [(StreamServerCore.Chunk, Int32)] = []
        for directive in directives {
            switch directive {
            case .send(let chunk):
                if let descriptor = files[chunk.identity] { chunks.append((chunk, descriptor)) }
            case .wake(let at):
                schedule(serveAt: at)
            }
        }
        guard !chunks.isEmpty else { return }
        let batch = chunks
        serving.async { [self] in send(batch) }
    }

    private func schedule(serveAt at: Int64) {
        let fresh = state.withLock { state -> Bool in
            guard state.serveWake.map({ at < $0 }) ?? true else { return false }
            state.serveWake = at
            return true
        }
        guard fresh else { return }
        control.asyncAfter(deadline: .now() + .nanoseconds(Int(max(0, at - now())))) { [weak self] in self?.serve() }
    }

    // MARK: The serving queue

    /// Reads each chunk from its file and sends it; at the first the link refuses (its queue is
    /// full), that one and the rest go back to the server, in order, to be sent a little later.
    private func send(_ chunks: [(StreamServerCore.Chunk, Int32)]) {
        var buffer = [UInt8](repeating: 0, count: configuration.server.chunkSize)
        for (index, (chunk, descriptor)) in chunks.enumerated() {
            let read = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, chunk.length, off_t(chunk.offset)) }
            guard read == chunk.length else {
                send(.refusal(id: chunk.request, reason: .unreadable), to: chunk.asker)
                continue
            }
            do {
                try sendBody(StreamMessage.chunk(id: chunk.request, offset: chunk.offset, bytes: Array(buffer.prefix(read))).encoded,
                             chunk.asker)
            } catch {
                let rest = chunks[index...].map(\.0)
                control.async { [self] in
                    var retry: Int64 = 0
                    state.withLock { state in
                        for chunk in rest.reversed() { retry = state.server.onSendDeferred(chunk, now: now()) }
                    }
                    schedule(serveAt: retry)
                }
                return
            }
        }
    }
}
