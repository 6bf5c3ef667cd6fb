/// A message's NATS headers: the `NATS/1.0` block of an `HPUB` or `HMSG`, with its optional status
/// line (`NATS/1.0 503` for no responders, `408 Request Timeout`, `100 Idle Heartbeat`).
///
/// Names keep their case and order as written; lookups ignore case, as NATS servers compare the
/// JetStream headers (`Nats-Msg-Id`, `Nats-Expected-Last-Subject-Sequence`) by their exact
/// spelling, which is the one used here. A name may appear more than once.
public struct NATSHeaders: Sendable, Hashable, Sequence {
    /// The status code of the header line, when it has one (`503`, `408`, `404`, `100`).
    public var status: Int?
    /// The words after the status code (`Idle Heartbeat`, `No Messages`), empty when none.
    public var statusDescription: String
    private var fields: [(name: String, value: String)]

    /// Headers with no fields and no status.
    public init() {
        status = nil
        statusDescription = ""
        fields = []
    }

    /// Headers holding `fields` in order.
    public init(_ fields: [(String, String)]) {
        self.init()
        for (name, value) in fields { append(name, value) }
    }

    /// Whether there are no fields (a status alone may still be set).
    public var isEmpty: Bool { fields.isEmpty }

    /// The first value of `name` (case-insensitive), nil when absent.
    public subscript(name: String) -> String? {
        get {
            let lowered = name.lowercased()
            return fields.first { $0.name.lowercased() == lowered }?.value
        }
        set {
            let lowered = name.lowercased()
            fields.removeAll { $0.name.lowercased() == lowered }
            if let newValue { fields.append((name, newValue)) }
        }
    }

    /// Every value of `name` (case-insensitive), in order.
    public func values(for name: String) -> [String] {
        let lowered = name.lowercased()
        return fields.filter { $0.name.lowercased() == lowered }.map(\.value)
    }

    /// Adds a field after the others, keeping any earlier field of the same name.
    public mutating func append(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    /// The fields in order, as (name, value).
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }

    /// Equal when status, description and fields (in order) are.
    public static func == (lhs: NATSHeaders, rhs: NATSHeaders) -> Bool {
        lhs.status == rhs.status && lhs.statusDescription == rhs.statusDescription
            && lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    /// Hashes status, description and fields.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(status)
        hasher.combine(statusDescription)
        for field in fields {
            hasher.combine(field.name)
            hasher.combine(field.value)
        }
    }

    // MARK: Wire form

    /// The block as sent: `NATS/1.0\r\n`, one `Name: value\r\n` a field, then `\r\n`. A client
    /// sends no status line. Throws `invalidHeaders` for a name with a colon, whitespace or
    /// control characters, or a value with a line break.
    package func encoded() throws(NATSError) -> [UInt8] {
        var bytes = Array("NATS/1.0\r\n".utf8)
        for (name, value) in fields {
            guard !name.isEmpty, name.utf8.allSatisfy({ $0 > 32 && $0 < 127 && $0 != UInt8(ascii: ":") }) else {
                throw NATSError(.invalidHeaders, reason: "header name '\(name)' is empty or holds a colon, whitespace or control characters")
            }
            guard !value.utf8.contains(where: { $0 == 13 || $0 == 10 }) else {
                throw NATSError(.invalidHeaders, reason: "the value of header '\(name)' holds a line break")
            }
            bytes += name.utf8
            bytes += Array(": ".utf8)
            bytes += value.utf8
            bytes += [13, 10]
        }
        bytes += [13, 10]
        return bytes
    }

    /// Parses a header block as received in an `HMSG` (its first `headerLength` bytes).
    /// Throws `protocolViolation` when the block does not start with `NATS/1.0` or a line is not
    /// `Name: value`.
    package static func parse(_ block: ArraySlice<UInt8>) throws(NATSError) -> NATSHeaders {
        var lines = String(decoding: block, as: UTF8.self).components(separatedBy: "\r\n")
        guard let first = lines.first, first.hasPrefix("NATS/1.0") else {
            throw NATSError(.protocolViolation, reason: "a header block does not start with NATS/1.0")
        }
        lines.removeFirst()
        var headers = NATSHeaders()
        let statusText = first.dropFirst("NATS/1.0".count).drop { $0 == " " }
        if !statusText.isEmpty {
            let code = statusText.prefix { $0.isNumber }
            guard code.count == 3, let status = Int(code) else {
                throw NATSError(.protocolViolation, reason: "a header status line '\(first.prefix(64))' has no three-digit code")
            }
            headers.status = status
            headers.statusDescription = String(statusText.dropFirst(3).drop { $0 == " " })
        }
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else {
                throw NATSError(.protocolViolation, reason: "a header line '\(line.prefix(64))' has no colon")
            }
            let name = String(line[..<colon])
            let value = String(line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" })
            headers.append(name, value)
        }
        return headers
    }
}
