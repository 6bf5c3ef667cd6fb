import Foundation

/// The incremental parser of what a NATS server sends: `INFO`, `MSG`, `HMSG`, `PING`, `PONG`,
/// `+OK` and `-ERR`, fed bytes as they arrive and yielding whole operations. A pure value.
///
/// Every size is bounded: a control line longer than `maximumControlLine` or a message larger
/// than `maximumPayload` (the server's own `max_payload` once its `INFO` has said it) is a
/// `protocolViolation`, so a broken or hostile server cannot make the client buffer without end.
/// After an error the parser is spent: the connection must be dropped. The grammar follows the
/// NATS client protocol (https://docs.nats.io/reference/reference-protocols/nats-protocol).
package struct NATSParser: Sendable {
    /// One operation from the server.
    package enum Operation: Sendable, Hashable {
        /// `INFO {json}`.
        case info(NATSServerInfo)
        /// `MSG` or `HMSG`: a message for a subscription.
        case message(NATSMessage)
        /// `PING`: the server asks for a `PONG`.
        case ping
        /// `PONG`: the answer to one of the client's `PING`s.
        case pong
        /// `+OK` (only sent to verbose clients).
        case ok
        /// `-ERR 'text'`, the text without its quotes.
        case error(String)
    }

    /// The longest control line accepted (NATS servers' own default is 4096; an INFO with a
    /// long list of cluster URLs may be longer, so more is allowed here).
    package var maximumControlLine: Int
    /// The largest message accepted, headers included.
    package var maximumPayload: Int

    private var buffer: [UInt8] = []
    private var start = 0
    /// Where the search for the current line's CRLF resumes, so that a line arriving in many
    /// small reads is scanned once, not once a read.
    private var scanned = 0
    private var pending: PendingMessage?
    private var failed: NATSError?

    private struct PendingMessage: Sendable {
        var subject: String
        var sid: UInt64
        var replyTo: String?
        var headerLength: Int?
        var totalLength: Int
    }

    /// A parser with these bounds.
    package init(maximumControlLine: Int = 64 * 1024, maximumPayload: Int = 64 * 1024 * 1024) {
        self.maximumControlLine = maximumControlLine
        self.maximumPayload = maximumPayload
    }

    /// Adds received bytes.
    package mutating func append<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        buffer.append(contentsOf: bytes)
    }

    /// The next whole operation, nil when more bytes are needed; throws `protocolViolation` on
    /// malformed or oversized input (and again on every later call).
    package mutating func next() throws(NATSError) -> Operation? {
        if let failed { throw failed }
        do {
            let operation = try parseNext()
            compact()
            return operation
        } catch {
            failed = error
            buffer = []
            start = 0
            scanned = 0
            throw error
        }
    }

    private mutating func compact() {
        if start > 0, start >= buffer.count / 2 || start == buffer.count {
            buffer.removeFirst(start)
            scanned = max(scanned - start, 0)
            start = 0
        }
    }

    private mutating func parseNext() throws(NATSError) -> Operation? {
        if let message = pending {
            let needed = message.totalLength + 2
            guard buffer.count - start >= needed else { return nil }
            let body = buffer[start..<(start + message.totalLength)]
            guard buffer[start + message.totalLength] == 13, buffer[start + message.totalLength + 1] == 10 else {
                throw NATSError(.protocolViolation, reason: "a message's payload is not followed by CRLF (its length is wrong)")
            }
            start += needed
            pending = nil
            var headers: NATSHeaders?
            var payload = Array(body)
            if let headerLength = message.headerLength {
                headers = try NATSHeaders.parse(body.prefix(headerLength))
                payload = Array(body.dropFirst(headerLength))
            }
            return .message(NATSMessage(subject: message.subject, sid: message.sid, replyTo: message.replyTo, headers: headers, payload: payload))
        }
        guard let end = lineEnd() else {
            if buffer.count - start > maximumControlLine {
                throw NATSError(.protocolViolation, reason: "a control line is longer than \(maximumControlLine) bytes")
            }
            return nil
        }
        guard end - start <= maximumControlLine else {
            throw NATSError(.protocolViolation, reason: "a control line is longer than \(maximumControlLine) bytes")
        }
        let line = buffer[start..<end]
        start = end + 2
        return try parseControl(line)
    }

    /// The index of the CR of the first CRLF from `start`.
    private mutating func lineEnd() -> Int? {
        var index = max(start, scanned)
        while index + 1 < buffer.count {
            if buffer[index] == 13, buffer[index + 1] == 10 { return index }
            index += 1
        }
        scanned = index
        return nil
    }

    private mutating func parseControl(_ line: ArraySlice<UInt8>) throws(NATSError) -> Operation? {
        let text = String(decoding: line, as: UTF8.self)
        let verbEnd = text.firstIndex { $0 == " " || $0 == "\t" } ?? text.endIndex
        let verb = text[..<verbEnd].uppercased()
        let rest = text[verbEnd...].drop { $0 == " " || $0 == "\t" }
        switch verb {
        case "PING": return .ping
        case "PONG": return .pong
        case "+OK": return .ok
        case "-ERR":
            var message = rest.trimmingCharacters(in: .whitespaces)
            if message.hasPrefix("'"), message.hasSuffix("'"), message.count >= 2 { message = String(message.dropFirst().dropLast()) }
            return .error(message)
        case "INFO":
            do {
                let info = try JSONDecoder().decode(NATSServerInfo.self, from: Data(rest.utf8))
                return .info(info)
            } catch {
                throw NATSError(.protocolViolation, reason: "an INFO line is not valid JSON: \(error)")
            }
        case "MSG", "HMSG":
            let arguments = rest.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            let withHeaders = verb == "HMSG"
            let counts = withHeaders ? 2 : 1
            guard arguments.count == 2 + counts || arguments.count == 3 + counts else {
                throw NATSError(.protocolViolation, reason: "\(verb) has \(arguments.count) arguments: '\(text.prefix(128))'")
            }
            guard let sid = UInt64(arguments[1]) else {
                throw NATSError(.protocolViolation, reason: "\(verb) has a sid '\(arguments[1].prefix(32))' that is not a number")
            }
            let replyTo = arguments.count == 3 + counts ? arguments[2] : nil
            let sizes = arguments.suffix(counts).map { Int($0) }
            guard sizes.allSatisfy({ $0 != nil && $0! >= 0 }) else {
                throw NATSError(.protocolViolation, reason: "\(verb) has a size that is not a non-negative number: '\(text.prefix(128))'")
            }
            let total = sizes.last!!
            let headerLength = withHeaders ? sizes[0]! : nil
            if let headerLength, headerLength > total {
                throw NATSError(.protocolViolation, reason: "HMSG's header size \(headerLength) exceeds its total size \(total)")
            }
            guard total <= maximumPayload else {
                throw NATSError(.payloadTooLarge, reason: "a message of \(total) bytes exceeds the limit of \(maximumPayload)")
            }
            pending = PendingMessage(subject: arguments[0], sid: sid, replyTo: replyTo, headerLength: headerLength, totalLength: total)
            return try parseNext()
        default:
            throw NATSError(.protocolViolation, reason: "unknown operation '\(verb.prefix(16))'")
        }
    }
}
