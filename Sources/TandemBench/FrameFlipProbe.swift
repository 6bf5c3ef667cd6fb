#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import TandemNet
import TandemClock

/// An independent frame-flip probe of mpv players: a thread per mpv polls
/// its `time-pos` over its own IPC socket, as another tool would, and takes the instant each
/// new frame appears.
///
/// `time-pos` is the time of the frame mpv last handed to its video output: it changes once
/// per frame (mpv 0.35), when the frame shows if mpv renders at display time
/// (`--video-timing-offset=0`, as `tandem` runs it), and up to 50 ms before it if mpv renders
/// ahead (mpv's default: the probe then reads when rendering began, up to ±16.5 ms off the
/// frames' display at 30 frames/s). A change seen by a poll happened between the
/// previous poll's answer and this one's: the flip is placed at the middle of the two round
/// trips' midpoints (raw CLOCK_MONOTONIC), good to half the distance between them (the poll
/// gap and a round trip, 0.1–0.3 ms on an idle machine). Each poll is its own request on a
/// connection of the probe's (mpv sends every client its events too: they are read and
/// skipped).
///
/// ```swift
/// let probe = try FrameFlipProbe(sockets: [a, b])
/// probe.start()
/// try FrameFlipProbe.send(["set_property", "pause", false], to: a)   // as a person's key would
/// ...
/// let flips = probe.stop()      // each mpv's flips, in order
/// ```
public final class FrameFlipProbe: Sendable {
    /// One frame appearing: its `time-pos` and when (raw monotonic ns), with how far either side
    /// the instant may be (ns).
    public struct Flip: Sendable, Hashable, Codable {
        /// The frame's time (s), as mpv reads it.
        public var position: Double
        /// When it appeared (raw monotonic ns).
        public var at: Int64
        /// Half the interval it appeared in (ns).
        public var uncertainty: Int64

        /// A flip of the frame at `position` (s) at `at`, good to ±`uncertainty` ns.
        public init(position: Double, at: Int64, uncertainty: Int64) {
            self.position = position
            self.at = at
            self.uncertainty = uncertainty
        }
    }

    /// Why a probe could not start, or a command could not be sent.
    public struct ProbeError: Error, CustomStringConvertible {
        /// What went wrong, in a sentence.
        public let description: String
    }

    /// The IPC sockets probed, one mpv each.
    public let sockets: [String]
    /// How long a poller rests between polls (ns): a poll costs mpv's IPC thread a little CPU.
    public let pollGap: Int64

    private let connections: [UnixStreamSocket]
    /// One mpv's flips so far, shared with its poller's thread.
    private final class Collected: Sendable {
        let flips = Mutex<[Flip]>([])
    }

    private let collected: [Collected]
    private let stopping = Atomic(false)
    private let threads = DispatchGroup()

    /// Connects to each mpv at `sockets` (one attempt each); polls every `pollGap` ns once started.
    public init(sockets: [String], pollGap: Int64 = 200_000) throws {
        self.sockets = sockets
        self.pollGap = pollGap
        var connections: [UnixStreamSocket] = []
        for path in sockets {
            do {
                connections.append(try UnixStreamSocket(connectingTo: path))
            } catch {
                throw ProbeError(description: "cannot connect to mpv at \(path): \(error)")
            }
        }
        self.connections = connections
        collected = sockets.map { _ in Collected() }
    }

    /// Starts polling, a thread per mpv.
    public func start() {
        for (index, connection) in connections.enumerated() {
            let thread = Thread { [self] in
                poll(connection, into: collected[index])
                threads.leave()
            }
            threads.enter()
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    /// Stops polling and returns each mpv's flips, in the order of `sockets`.
    public func stop() -> [[Flip]] {
        stopping.store(true, ordering: .relaxed)
        _ = threads.wait(timeout: .now() + 5)
        return collected.map { $0.flips.withLock { $0 } }
    }

    /// The flips so far of the mpv at index `peer`.
    public func flips(of peer: Int) -> [Flip] { collected[peer].flips.withLock { $0 } }

    private static let request = Array(#"{"command":["get_property","time-pos"],"request_id":7}"#.utf8) + [UInt8(ascii: "\n")]

    /// Polls `connection` until stopped (or mpv goes away), appending each new frame's flip.
    private func poll(_ connection: UnixStreamSocket, into output: Collected) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var pending: [UInt8] = []
        var last: Double?
        var lastMidpoint: Int64?
        var gap = timespec(tv_sec: 0, tv_nsec: Int(pollGap))
        while !stopping.load(ordering: .relaxed) {
            let sent = HostInstant.now().nanoseconds
            guard (try? connection.writeAll(Self.request, timeout: 1_000_000_000)) != nil else { return }
            // Read until the reply (events on the way are skipped); at most a second.
            var value: Double??
            while value == nil {
                guard let line = Self.nextLine(&pending) else {
                    if stopping.load(ordering: .relaxed) { return }
                    guard (try? connection.waitUntilReadable(timeout: 100_000_000)) == true else { continue }
                    guard let count = Self.read(connection, into: &buffer) else { continue }
                    // The end of the stream, or an error: mpv went away.
                    guard count > 0 else { return }
                    pending.append(contentsOf: buffer[0..<count])
                    continue
                }
                if let reply = Self.reply(line) { value = .some(reply) }
            }
            let received = HostInstant.now().nanoseconds
            let midpoint = sent + (received - sent) / 2
            if let position = value ?? nil, position != last {
                if let previous = lastMidpoint, last != nil {
                    output.flips.withLock { $0.append(Flip(position: position, at: previous + (midpoint - previous) / 2,
                                                     uncertainty: (midpoint - previous) / 2 + (received - sent) / 2)) }
                }
                last = position
            } else if value ?? nil == nil {
                last = nil
            }
            lastMidpoint = midpoint
            if pollGap > 0 { nanosleep(&gap, nil) }
        }
    }

    /// Reads what is waiting: nil when nothing is, 0 at the end of the stream or on an error.
    private static func read(_ connection: UnixStreamSocket, into buffer: inout [UInt8]) -> Int? {
        do {
            return try connection.read(into: &buffer)
        } catch {
            return 0
        }
    }

    /// Takes one line (without its newline) off the front of `pending`, if a whole one is there.
    private static func nextLine(_ pending: inout [UInt8]) -> [UInt8]? {
        guard let newline = pending.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        let line = Array(pending[..<newline])
        pending.removeSubrange(...newline)
        return line
    }

    /// The value of a reply line to the probe's request (nil inside when mpv has no position),
    /// or nil for any other line (an event). mpv writes a reply as `{"data":V,"request_id":7,
    /// "error":"success"}`: read without a JSON parser, which would cost the poll more than the
    /// round trip.
    private static func reply(_ line: [UInt8]) -> Double?? {
        guard contains(line, requestMarker), let start = range(of: dataMarker, in: line)?.upperBound else { return nil }
        let end = line[start...].firstIndex { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "}") } ?? line.endIndex
        return .some(Double(String(decoding: line[start..<end], as: UTF8.self)))
    }

    private static let requestMarker = Array(#""request_id":7,"#.utf8)
    private static let dataMarker = Array(#""data":"#.utf8)

    private static func contains(_ line: [UInt8], _ marker: [UInt8]) -> Bool { range(of: marker, in: line) != nil }

    /// Where `marker` first occurs in `line`.
    private static func range(of marker: [UInt8], in line: [UInt8]) -> Range<Int>? {
        guard line.count >= marker.count else { return nil }
        for start in 0...(line.count - marker.count) where line[start] == marker[0] {
            if line[start..<(start + marker.count)].elementsEqual(marker) { return start..<(start + marker.count) }
        }
        return nil
    }

    /// The mpv at `socket`'s `time-pos` (s), read on a connection of its own: nil when mpv is
    /// not there, has no position yet, or does not answer within a second.
    public static func position(at socket: String) -> Double? {
        guard let connection = try? UnixStreamSocket(connectingTo: socket),
              (try? connection.writeAll(request, timeout: 1_000_000_000)) != nil else { return nil }
        return firstLine(on: connection, until: HostInstant.now().nanoseconds + 1_000_000_000) { reply($0) } ?? nil
    }

    /// Reads `connection` a line at a time until `match` takes one (and returns its value),
    /// the stream ends, or the raw monotonic instant `deadline` passes (nil then).
    private static func firstLine<T>(on connection: UnixStreamSocket, until deadline: Int64,
                                     _ match: ([UInt8]) throws -> T?) rethrows -> T? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var pending: [UInt8] = []
        // Bounded by the deadline.
        while HostInstant.now().nanoseconds < deadline {
            if let line = nextLine(&pending) {
                if let value = try match(line) { return value }
                continue
            }
            guard (try? connection.waitUntilReadable(timeout: 100_000_000)) == true else { continue }
            guard let count = read(connection, into: &buffer) else { continue }
            guard count > 0 else { return nil }
            pending.append(contentsOf: buffer[0..<count])
        }
        return nil
    }

    /// Sends one IPC command to the mpv at `socket` on a connection of its own, as a person's
    /// key (or another tool) would, and waits (at most a second) for mpv's answer; returns when
    /// it was written (raw monotonic ns). Throws when mpv is not there or refuses the command.
    @discardableResult
    public static func send(_ command: [Any], to socket: String) throws -> Int64 {
        let connection: UnixStreamSocket
        do {
            connection = try UnixStreamSocket(connectingTo: socket)
        } catch {
            throw ProbeError(description: "cannot connect to mpv at \(socket): \(error)")
        }
        let body = try JSONSerialization.data(withJSONObject: ["command": command, "request_id": 9])
        let sent = HostInstant.now().nanoseconds
        do {
            try connection.writeAll(Array(body) + [UInt8(ascii: "\n")], timeout: 1_000_000_000)
        } catch {
            throw ProbeError(description: "cannot write to mpv at \(socket): \(error)")
        }
        let answered = try firstLine(on: connection, until: sent + 1_000_000_000) { line -> Bool? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                  object["request_id"] as? Int == 9 else { return nil }
            let error = object["error"] as? String ?? "no error field"
            guard error == "success" else { throw ProbeError(description: "mpv refused \(command): \(error)") }
            return true
        }
        if answered == true { return sent }
        throw ProbeError(description: "mpv at \(socket) did not answer \(command) within a second")
    }
}
