import Dispatch
import Foundation
import Synchronization
import TandemClock
import TandemWire

/// A participant's side of clock synchronization: probes a time service over UDP, following a
/// `ClockPollingPolicy`, and feeds the replies to a `SessionClock`: on a thread of its own
/// (`start()`), or as a handler on an event loop (`start(on:)`: its socket watched there, each
/// probe a task scheduled there), as a participant's prober runs on the participant's loop.
///
/// Read the clock from any thread with `sessionTime()` or a `sessionClock` snapshot.
public final class ClockProber: Sendable {
    /// Called on the prober's thread for every sample, with the estimator's verdict and the local
    /// time at which the sample was applied.
    public typealias SampleObserver = @Sendable (ClockSample, ClockEstimator.Verdict, Int64) -> Void

    /// The time service probed.
    public let server: SocketAddress
    /// The local clock stamping probes and replies.
    public let clock: any LocalClock
    private let socket: UDPSocket
    private let wakeup: WakeupChannel
    private let state: Mutex<State>
    private let observer: SampleObserver?
    private let finished = DispatchSemaphore(value: 0)

    private struct State: Sendable {
        var policy: ClockPollingPolicy
        var sessionClock: SessionClock
        var lifecycle = Lifecycle.idle
        var socketErrors = 0
        /// The loop it runs on, when started on one, and its next probe there.
        var loop: EventLoop?
        var nextProbe: ScheduledTask?
    }

    private enum Lifecycle { case idle, running, stopping, stopped }

    /// Prepares to probe `server`; call `start()` to begin.
    public init(server: SocketAddress, clock: any LocalClock,
                policy: ClockPollingPolicy.Configuration = ClockPollingPolicy.Configuration(),
                sessionClock: SessionClock.Configuration = SessionClock.Configuration(),
                observer: SampleObserver? = nil) throws(SystemCallError) {
        self.server = server
        self.clock = clock
        self.observer = observer
        socket = try UDPSocket(family: server.family)
        try socket.connect(to: server)
        wakeup = try WakeupChannel()
        state = Mutex(State(
            policy: ClockPollingPolicy(configuration: policy, startTime: clock.instant().nanoseconds, firstSequence: UInt32.random(in: 0...UInt32.max)),
            sessionClock: SessionClock(configuration: sessionClock)
        ))
    }

    /// A snapshot of the session clock as it stands.
    public var sessionClock: SessionClock { state.withLock { $0.sessionClock } }

    /// The polling counters so far.
    public var pollingStatistics: ClockPollingPolicy.Statistics { state.withLock { $0.policy.statistics } }

    /// Socket calls that failed so far (for example a refused port while the service is down);
    /// the prober keeps probing through them.
    public var socketErrors: Int { state.withLock { $0.socketErrors } }

    /// The session time now, or nil before the first reply.
    public func sessionTime() -> Int64? {
        state.withLock { $0.sessionClock.sessionTime(atLocal: clock.instant())?.nanoseconds }
    }

    /// Starts probing on a thread of its own. Calling it again does nothing.
    public func start() {
        let shouldStart = state.withLock { state in
            guard state.lifecycle == .idle else { return false }
            state.lifecycle = .running
            return true
        }
        guard shouldStart else { return }
        let thread = Thread { [self] in
            probeUntilStopped()
            finished.signal()
        }
        thread.name = "tandem-clock-prober"
        thread.start()
    }

    /// Starts probing as a handler on `loop`, with no thread of its own: the socket is watched
    /// there and each probe is a task scheduled there (on this prober's clock, as a delay).
    /// Calling `start` again does nothing.
    package func start(on loop: EventLoop) {
        let shouldStart = state.withLock { state in
            guard state.lifecycle == .idle else { return false }
            state.lifecycle = .running
            state.loop = loop
            return true
        }
        guard shouldStart else { return }
        loop.execute { [self] in
            guard state.withLock({ $0.lifecycle == .running }) else { return }
            var buffer = [UInt8](repeating: 0, count: 64)
            loop.register(socket.descriptor, interest: .readable) { [self] _, _, _ in
                receiveAll(into: &buffer)
            }
            probe(on: loop)
        }
    }

    /// Stops probing: the thread finishes (`stop` waits for it), or the loop lets the socket go
    /// (at once on the loop, else on its next pass). The prober cannot be restarted.
    public func stop() {
        let (wasRunning, loop) = state.withLock { state in
            defer { if state.lifecycle != .stopped { state.lifecycle = .stopping } }
            return (state.lifecycle == .running, state.loop)
        }
        if let loop {
            state.withLock { $0.lifecycle = .stopped }
            guard wasRunning else { return }
            if loop.inLoop { release(on: loop) } else { loop.execute { [self] in release(on: loop) } }
            return
        }
        if wasRunning {
            wakeup.wake()
            finished.wait()
        }
        state.withLock { $0.lifecycle = .stopped }
    }

    /// Sends the probe the policy asks for now, if any, and schedules the next on `loop`. Loop only.
    private func probe(on loop: EventLoop) {
        loop.preconditionInLoop()
        let now = clock.instant().nanoseconds
        let outcome = state.withLock { state -> (probe: ClockProbe?, next: Int64)? in
            guard state.lifecycle == .running else { return nil }
            return (state.policy.probe(now: now, sessionClock: state.sessionClock), state.policy.nextProbeTime)
        }
        guard let outcome else { return }
        if let probe = outcome.probe { send(probe) }
        let task = loop.schedule(after: LocalInstant(nanoseconds: outcome.next) - clock.instant()) { [self] in probe(on: loop) }
        state.withLock { $0.nextProbe = task }
    }

    /// Stops watching the socket and calls off the next probe. Loop only.
    private func release(on loop: EventLoop) {
        loop.preconditionInLoop()
        loop.deregister(socket.descriptor)
        state.withLock { $0.nextProbe }?.cancel()
    }

    private func probeUntilStopped() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while state.withLock({ $0.lifecycle == .running }) {
            let now = clock.instant().nanoseconds
            let (probe, nextProbeTime) = state.withLock { state in
                (state.policy.probe(now: now, sessionClock: state.sessionClock), state.policy.nextProbeTime)
            }
            if let probe { send(probe) }
            do {
                let timeout = max(nextProbeTime - clock.instant().nanoseconds, 0)
                _ = try Readiness.waitUntilReadable([socket.descriptor, wakeup.readDescriptor], timeout: timeout)
            } catch {
                state.withLock { $0.socketErrors += 1 }
                continue
            }
            receiveAll(into: &buffer)
        }
    }

    /// Takes every reply waiting on the socket, each stamped as it is read.
    private func receiveAll(into buffer: inout [UInt8]) {
        do {
            while let (length, _) = try socket.receive(into: &buffer) {
                let receiveTime = clock.instant().nanoseconds
                guard length <= buffer.count else { continue }
                handle(buffer[..<length], receivedAt: receiveTime)
            }
        } catch {
            // A refused port (ICMP) on the connected socket surfaces here; the service may
            // come up later, so keep probing.
            state.withLock { $0.socketErrors += 1 }
        }
    }

    private func send(_ probe: ClockProbe) {
        do {
            try socket.send(TimeDatagram.request(probe).encoded())
        } catch {
            state.withLock { $0.socketErrors += 1 }
        }
    }

    private func handle(_ bytes: ArraySlice<UInt8>, receivedAt receiveTime: Int64) {
        guard case let .reply(reply)? = try? TimeDatagram.decode(bytes) else { return }
        let applied: (ClockSample, ClockEstimator.Verdict, Int64)? = state.withLock { state in
            let outcome = state.policy.onReply(
                sequence: reply.probe.sequence, echoedSendTime: reply.probe.sendTime,
                serverReceiveTime: reply.serverReceiveTime, serverSendTime: reply.serverSendTime,
                receiveTime: receiveTime
            )
            guard case let .sample(sample) = outcome else { return nil }
            let now = clock.instant()
            return (sample, state.sessionClock.onSample(sample, now: now), now.nanoseconds)
        }
        if let applied, let observer { observer(applied.0, applied.1, applied.2) }
    }
}
