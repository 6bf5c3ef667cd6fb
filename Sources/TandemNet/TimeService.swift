import Dispatch
import Foundation
import Synchronization
import TandemClock

/// The session's time service: answers time probes on a UDP socket, on a thread of its own.
///
/// Nothing else runs on that thread, so a reply leaves within microseconds of its request's
/// arrival, stamped with the injected session clock on receipt and again just before sending.
/// Malformed, truncated, oversized and unexpected datagrams are counted and ignored; the service
/// keeps answering. A relay runs one on its own port (or feeds its shared port's time datagrams to
/// a `TimeResponder`).
public final class TimeService: Sendable {
    /// Where the service listens.
    public let localAddress: SocketAddress
    private let socket: UDPSocket
    private let responder: TimeResponder
    private let wakeup: WakeupChannel
    private let state = Mutex(State.idle)
    private let answered = Atomic<Int>(0)
    private let ignored = Atomic<Int>(0)
    private let finished = DispatchSemaphore(value: 0)

    private enum State { case idle, running, stopping, stopped }

    /// Binds the service to `address` (port 0 picks a free port); call `start()` to serve.
    public init(clock: any LocalClock, address: SocketAddress) throws(SystemCallError) {
        socket = try UDPSocket(boundTo: address)
        localAddress = try socket.localAddress()
        responder = TimeResponder(clock: clock)
        wakeup = try WakeupChannel()
    }

    /// Counters so far.
    public var statistics: TimeServiceStatistics {
        TimeServiceStatistics(answered: answered.load(ordering: .relaxed), ignored: ignored.load(ordering: .relaxed))
    }

    /// Starts answering on a thread of its own. Calling it again does nothing.
    public func start() {
        let shouldStart = state.withLock { state in
            guard state == .idle else { return false }
            state = .running
            return true
        }
        guard shouldStart else { return }
        let thread = Thread { [self] in
            serve()
            finished.signal()
        }
        thread.name = "tandem-time-service"
        thread.start()
    }

    /// Stops answering and waits for the thread to finish. The service cannot be restarted.
    public func stop() {
        let wasRunning = state.withLock { state in
            defer { if state != .stopped { state = .stopping } }
            return state == .running
        }
        guard wasRunning else {
            state.withLock { $0 = .stopped }
            return
        }
        wakeup.wake()
        finished.wait()
        state.withLock { $0 = .stopped }
    }

    private var isStopping: Bool { state.withLock { $0 == .stopping } }

    private func serve() {
        // A time datagram is 32 bytes; a buffer a little larger lets oversized ones be recognised
        // by their real length (MSG_TRUNC) without reading them whole.
        var buffer = [UInt8](repeating: 0, count: 64)
        while !isStopping {
            do {
                _ = try Readiness.waitUntilReadable([socket.descriptor, wakeup.readDescriptor], timeout: -1)
                while let (length, sender) = try socket.receive(into: &buffer) {
                    let receiveTime = responder.clock.instant().nanoseconds
                    answer(length: length, sender: sender, buffer: buffer, receiveTime: receiveTime)
                }
            } catch {
                // Only a broken descriptor makes poll or recvfrom fail; count it and go on rather
                // than leave every participant without time.
                ignored.add(1, ordering: .relaxed)
            }
        }
    }

    private func answer(length: Int, sender: SocketAddress?, buffer: [UInt8], receiveTime: Int64) {
        guard let sender, length <= buffer.count else {
            ignored.add(1, ordering: .relaxed)
            return
        }
        switch responder.reply(to: buffer[..<length], receivedAt: receiveTime) {
        case let .success(reply):
            let sent = (try? socket.send(reply, to: sender)) ?? false
            if sent {
                answered.add(1, ordering: .relaxed)
            } else {
                ignored.add(1, ordering: .relaxed)
            }
        case .failure:
            ignored.add(1, ordering: .relaxed)
        }
    }
}
