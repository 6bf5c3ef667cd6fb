import Foundation
import Synchronization
import TandemNet

/// `JetStreamOrderedConsumer` with its deliveries handed to a callback on the connection's loop
/// thread, with no task and no buffer between: what a shell on loops (a cluster relay's session
/// log) follows a subject with, so that a stored message costs the socket's read and the
/// callback, not a wake-up of a task for the subscription and another for the sequence.
///
/// The consumer `JetStreamOrderedConsumer` is made of (an ephemeral push consumer without
/// acknowledgements, flow control and idle heartbeats, delivering to an inbox of its own), and
/// the same rules: each message once and in stream order; a gap in the consumer sequence, an
/// idle heartbeat naming a later consumer sequence, or heartbeats that stop (the consumer's
/// server died) start a new consumer from the sequence after the last one delivered. No
/// delivery runs in a task: the set-up of each consumer does (rare). Its watchdog is a check
/// on the connection's loop, beside the deliveries, once a heartbeat: that the consumer was
/// heard from lately (the silence counted from when the consumer was created). `deliver` must
/// be quick: it runs on the loop.
package final class JetStreamLoopConsumer: Sendable {
    private let jetStream: JetStream
    private let stream: String
    private let subject: String
    private let heartbeat: Duration
    private let deliver: @Sendable (JetStreamStoredMessage) -> Void
    private let ended: @Sendable (JetStreamError?) -> Void
    private let state: Mutex<State>

    private struct State {
        /// The stream sequence the next consumer starts from.
        var next: UInt64
        /// The last consumer sequence delivered by the current consumer.
        var consumerSequence: UInt64 = 0
        /// Which consumer deliveries count for; an old one's late messages are dropped.
        var generation: UInt64 = 0
        /// Whether the current consumer's deliveries are taken (false once it must be replaced).
        var accepting = false
        /// Whether the current consumer delivered a message (then a new one starts at once).
        var delivered = false
        /// When the current consumer was last heard from (monotonic ns).
        var lastActivity: Int64 = 0
        /// Whether the current consumer's watchdog is to go on checking.
        var watching = false
        /// The watchdog's next check, cancelled when the consumer is replaced.
        var watchdog: ScheduledTask?
        /// Tells the task to replace the current consumer.
        var restart: AsyncStream<Void>.Continuation?
        var task: Task<Void, Never>?
        var stopped = false
    }

    /// Follows `subject` of `stream` from `sequence`; call `start()`. `deliver` gets each stored
    /// message on the loop; `ended` is called once, with the error when the stream is gone or
    /// the connection closed, after which nothing more is delivered (not called after `stop()`).
    package init(jetStream: JetStream, stream: String, subject: String, from sequence: UInt64, heartbeat: Duration = .seconds(1),
                 deliver: @escaping @Sendable (JetStreamStoredMessage) -> Void, ended: @escaping @Sendable (JetStreamError?) -> Void) {
        self.jetStream = jetStream
        self.stream = stream
        self.subject = subject
        self.heartbeat = heartbeat
        self.deliver = deliver
        self.ended = ended
        state = Mutex(State(next: Swift.max(sequence, 1)))
    }

    /// Starts following (once).
    package func start() {
        state.withLock { state in
            guard state.task == nil, !state.stopped else { return }
            state.task = Task { [self] in await run() }
        }
    }

    /// Stops following: nothing more is delivered, and the consumer goes.
    package func stop() {
        let (task, restart) = state.withLock { state in
            state.stopped = true
            state.accepting = false
            return (state.task, state.restart)
        }
        restart?.finish()
        task?.cancel()
    }

    /// Starts a new consumer from `sequence`, the message `deliver` was just given and could
    /// not take (a reader whose buffer is full): nothing more of the current consumer is
    /// delivered. Called from `deliver`, on the loop, so no later message slips in between.
    package func restart(from sequence: UInt64) {
        let restart = state.withLock { state -> AsyncStream<Void>.Continuation? in
            guard state.accepting else { return nil }
            state.accepting = false
            state.next = sequence
            return state.restart
        }
        restart?.yield()
    }

    private static func now() -> Int64 { Int64(DispatchTime.now().uptimeNanoseconds) }

    /// Sets up consumers one after another, each until it must be replaced.
    private func run() async {
        let connection = jetStream.connection
        var pause = Duration.zero
        while !Task.isCancelled {
            if pause > .zero { try? await Task.sleep(for: pause) }
            pause = .milliseconds(250)
            if connection.isClosed {
                if !state.withLock({ $0.stopped }) { ended(JetStreamError(.connection, reason: "the NATS connection is closed")) }
                return
            }
            let (restarts, restart) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
            guard let (generation, next) = state.withLock({ state -> (UInt64, UInt64)? in
                guard !state.stopped else { return nil }
                state.generation += 1
                state.consumerSequence = 0
                state.accepting = true
                state.delivered = false
                state.restart = restart
                return (state.generation, state.next)
            }) else { return }
            let inbox = "_INBOX.\(UInt64.random(in: 0...UInt64.max)).\(UInt64.random(in: 0...UInt64.max))"
            guard let sid = try? await connection.subscribe(to: inbox, handler: { [weak self] message in
                self?.onMessage(message, generation: generation)
            }) else { continue }
            let name: String
            do {
                name = try await JetStreamOrderedConsumer.createConsumer(jetStream, stream: stream, subject: subject, inbox: inbox, from: next,
                                                                         heartbeat: heartbeat)
            } catch let error as JetStreamError where error.kind == .streamNotFound {
                await connection.unsubscribe(sid)
                if !state.withLock({ $0.stopped }) { ended(error) }
                return
            } catch {
                await connection.unsubscribe(sid)
                continue
            }
            // The silence counts from when the consumer exists: a create that took longer than
            // a few heartbeats (a leader election) must not trip the watchdog on an idle subject.
            state.withLock { state in
                if state.generation == generation { state.lastActivity = Self.now() }
            }
            // Heartbeats that stop mean the consumer is gone with its server: start again.
            let interval = NATSConnection.nanoseconds(heartbeat)
            state.withLock { state in
                if state.generation == generation { state.watching = true }
            }
            watch(generation: generation, every: interval, silence: 3 * interval, restart: restart)
            for await _ in restarts { break }
            let watchdog = state.withLock { state -> ScheduledTask? in
                guard state.generation == generation else { return nil }
                state.watching = false
                defer { state.watchdog = nil }
                return state.watchdog
            }
            watchdog?.cancel()
            let delivered = state.withLock { state in
                if state.generation == generation { state.accepting = false }
                return state.delivered
            }
            if delivered { pause = .zero }
            await connection.unsubscribe(sid)
            // Deleted aside, not waited for: after a node's death the delete can wait out the
            // JetStream API's whole timeout before the next consumer is made. Left
            // alone, a consumer with no interest goes after its `inactive_threshold` anyway.
            // Asked on the loop, its answer (or its failure) ignored there.
            if let delete = try? "\(jetStream.apiPrefix).CONSUMER.DELETE.\(JetStream.checkName(stream)).\(JetStream.checkName(name))" {
                let timeout = NATSConnection.nanoseconds(jetStream.timeout)
                connection.execute {
                    connection.requestOnLoop(delete, payload: [], timeout: timeout) { _ in }
                }
            }
        }
    }

    /// Checks `interval` nanoseconds from now, on the connection's loop, and then once an
    /// interval, whether consumer `generation` has been silent for more than `silence`; if so,
    /// tells the set-up task to replace it (`restart`) and checks no more. Stops once the
    /// consumer is no longer watched (replaced, or the consumer stopped).
    private func watch(generation: UInt64, every interval: Int64, silence: Int64, restart: AsyncStream<Void>.Continuation) {
        let next = jetStream.connection.loop.schedule(after: .init(nanoseconds: interval)) { [weak self] in
            guard let self else { return }
            enum Check { case unwatched, silent, heard }
            let check = state.withLock { state -> Check in
                guard state.generation == generation, state.watching, !state.stopped else { return .unwatched }
                return Self.now() - state.lastActivity > silence ? .silent : .heard
            }
            switch check {
            case .unwatched: return
            case .silent: restart.yield()
            case .heard: watch(generation: generation, every: interval, silence: silence, restart: restart)
            }
        }
        state.withLock { state in
            if state.generation == generation, state.watching { state.watchdog = next }
        }
    }

    /// A delivery, heartbeat or flow-control request of consumer `generation`, on the loop.
    private func onMessage(_ message: NATSMessage, generation: UInt64) {
        enum Step { case ignore, flowControl(String?, restart: AsyncStream<Void>.Continuation?), restart(AsyncStream<Void>.Continuation?), deliver(JetStreamStoredMessage) }
        let step = state.withLock { state -> Step in
            guard state.generation == generation, state.accepting else { return .ignore }
            state.lastActivity = Self.now()
            if message.status == 100 {
                let later = message.headers?["Nats-Last-Consumer"].flatMap(UInt64.init).map { $0 > state.consumerSequence } ?? false
                if later { state.accepting = false }
                return .flowControl(message.replyTo, restart: later ? state.restart : nil)
            }
            guard let delivery = JetStreamOrderedConsumer.Delivery(replyTo: message.replyTo) else { return .ignore }
            guard delivery.consumerSequence == state.consumerSequence + 1 else {
                state.accepting = false
                return .restart(state.restart)
            }
            state.consumerSequence = delivery.consumerSequence
            state.next = delivery.streamSequence + 1
            state.delivered = true
            return .deliver(JetStreamStoredMessage(subject: message.subject, sequence: delivery.streamSequence, headers: message.headers, payload: message.payload))
        }
        switch step {
        case .ignore:
            break
        case let .flowControl(reply, restart):
            if let reply { _ = jetStream.connection.publishOnLoop(reply, payload: []) }
            restart?.yield()
        case let .restart(restart):
            restart?.yield()
        case let .deliver(stored):
            deliver(stored)
        }
    }
}
