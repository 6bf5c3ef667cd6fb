import Foundation

/// JetStream over a NATS connection: streams, compare-and-set publishes and reads, through the
/// JSON API on `$JS.API.…` subjects by request and reply
/// (https://docs.nats.io/reference/reference-protocols/nats_api_reference).
///
/// A value, cheap to copy; every call is a request on the connection's muxed inbox.
public struct JetStream: Sendable {
    /// The connection the API calls go over.
    public let connection: NATSConnection
    /// The API's subject prefix (`$JS.API`, or a domain's).
    public let apiPrefix: String
    /// How long an API call waits for its answer.
    public let timeout: Duration

    /// JetStream on `connection`.
    public init(connection: NATSConnection, apiPrefix: String = "$JS.API", timeout: Duration = .seconds(5)) {
        self.connection = connection
        self.apiPrefix = apiPrefix
        self.timeout = timeout
    }

    // MARK: Streams

    /// Creates a stream; throws `streamNameInUse` when one of that name has another configuration.
    @discardableResult
    public func createStream(_ configuration: JetStreamStreamConfiguration) async throws(JetStreamError) -> JetStreamStreamInfo {
        try await call("STREAM.CREATE.\(try Self.checkName(configuration.name))", body: try Self.encode(configuration), as: JetStreamStreamInfo.self)
    }

    /// Changes a stream's configuration (what the server allows to change).
    @discardableResult
    public func updateStream(_ configuration: JetStreamStreamConfiguration) async throws(JetStreamError) -> JetStreamStreamInfo {
        try await call("STREAM.UPDATE.\(try Self.checkName(configuration.name))", body: try Self.encode(configuration), as: JetStreamStreamInfo.self)
    }

    /// A stream's configuration, state and cluster; throws `streamNotFound`.
    public func streamInfo(_ name: String) async throws(JetStreamError) -> JetStreamStreamInfo {
        try await call("STREAM.INFO.\(try Self.checkName(name))", body: [], as: JetStreamStreamInfo.self)
    }

    /// Deletes a stream and its messages; throws `streamNotFound`.
    public func deleteStream(_ name: String) async throws(JetStreamError) {
        _ = try await call("STREAM.DELETE.\(try Self.checkName(name))", body: [], as: Success.self)
    }

    /// Removes from `stream` the messages on `subject` below sequence `before` (all of them when
    /// nil), leaving the rest of the stream alone; how many it removed. Throws `streamNotFound`.
    ///
    /// `$JS.API.STREAM.PURGE.<stream>` with `filter` and `seq`: nats-server's
    /// `jsStreamPurgeRequest` (server/jetstream_api.go, 2.9) decodes a `JSApiStreamPurgeRequest`
    /// (`filter`, `seq` "up to but not including", `keep`; `seq` and `keep` exclusive) and
    /// hands it to the stream's purge (through the stream's Raft group in a cluster,
    /// `jsClusteredStreamPurgeRequest`), answering `purged` and `success`.
    @discardableResult
    public func purge(stream: String, subject: String, before sequence: UInt64? = nil) async throws(JetStreamError) -> UInt64 {
        var body: [String: Field] = ["filter": .text(subject)]
        if let sequence { body["seq"] = .number(sequence) }
        return try await call("STREAM.PURGE.\(try Self.checkName(stream))", body: Self.json(body), as: Purged.self).purged ?? 0
    }

    private struct Purged: Decodable { var purged: UInt64? }

    /// The subjects of `stream` matching `filter` (wildcards allowed) with how many messages each
    /// holds: `$JS.API.STREAM.INFO` with `subjects_filter`, page after page (nats-server 2.9's
    /// `jsStreamInfoRequest` answers `state.subjects` with `total` and `offset`). Throws
    /// `streamNotFound`.
    public func subjects(of stream: String, matching filter: String) async throws(JetStreamError) -> [String: UInt64] {
        var subjects: [String: UInt64] = [:]
        while true {
            let page = try await call("STREAM.INFO.\(try Self.checkName(stream))",
                                      body: Self.json(["subjects_filter": .text(filter), "offset": .number(UInt64(subjects.count))]),
                                      as: SubjectsPage.self)
            let before = subjects.count
            subjects.merge(page.state.subjects ?? [:]) { _, new in new }
            // A page that adds nothing ends it too (a server that ignored the offset).
            guard subjects.count > before, let total = page.total, subjects.count < total else { return subjects }
        }
    }

    private struct SubjectsPage: Decodable {
        struct State: Decodable { var subjects: [String: UInt64]? }
        var state: State
        var total: Int?
    }

    // MARK: Publishing

    /// Publishes to a stream's subject and waits for the stream's acknowledgement. With a
    /// message id, a timeout or a lost connection is retried with the same id within the
    /// options' window, so that the retry never stores it twice (the acknowledgement then says
    /// `duplicate`). A stream between leaders has nobody answering its subject, which looks like
    /// no stream at all, so no responders is retried too (nats-server's Raft elects a new leader
    /// 4 to 9 s after losing one). Throws `wrongLastSequence` when an expected sequence does
    /// not hold, `noStream` when no stream takes the subject (after the window, with a message
    /// id), `timeout` once the window is over.
    public func publish(_ subject: String, payload: [UInt8], headers: NATSHeaders? = nil, options: JetStreamPublishOptions = JetStreamPublishOptions()) async throws(JetStreamError) -> JetStreamPubAck {
        let headers = options.applied(to: headers)
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: options.messageID == nil ? .zero : options.retryWindow)
        var wait = Duration.milliseconds(50)
        // Whether an attempt may have been stored without its acknowledgement reaching us.
        var mayHaveStored = options.mayHaveBeenStored
        while true {
            let failure: JetStreamError
            do {
                let reply = try await connection.request(subject, payload: payload, headers: headers, timeout: options.attemptTimeout)
                if reply.status == nil, let ack = JetStreamPubAck(plain: reply.payload) { return ack }
                let ack = try Self.decode(reply, as: JetStreamPubAck.self)
                return ack
            } catch let error as NATSError {
                if error.kind == .noResponders {
                    failure = JetStreamError(.noStream, reason: "no stream takes subject '\(subject)' (nobody answered)", connectionError: error)
                } else if error.kind == .timeout || error.kind == .connectionLost || error.kind == .pendingBufferFull {
                    mayHaveStored = mayHaveStored || error.kind != .pendingBufferFull
                    failure = JetStreamError(error, doing: "publishing to '\(subject)'")
                } else {
                    throw JetStreamError(error, doing: "publishing to '\(subject)'")
                }
            } catch let error as JetStreamError {
                if error.kind == .wrongLastSequence, mayHaveStored, let messageID = options.messageID {
                    do throws(JetStreamError) {
                        if let ack = try await storedEarlier(subject, messageID: messageID, stream: error.stream, options: options) { return ack }
                        throw error
                    } catch let lookup where lookup.kind == .timeout || lookup.kind == .connection || lookup.status == 503 {
                        // The cluster is still settling (the meta leader may have gone too): ask again.
                        failure = lookup
                    }
                } else {
                    // A stream between leaders answers 503; anything else is the answer.
                    guard error.status == 503 else { throw error }
                    failure = error
                }
            } catch {
                throw JetStreamError(.badResponse, reason: "\(error)")
            }
            guard clock.now.advanced(by: wait) < end else { throw failure }
            try? await Task.sleep(for: wait)
            wait = min(wait * 2, .milliseconds(250))
        }
    }

    /// One attempt of `publish`, for a shell on the connection's loop that works by callbacks
    /// (`ClusterSessionLog`'s publisher): the request goes out from the loop and `completion`
    /// runs on the loop with the acknowledgement or the attempt's error, with no task and no
    /// retry. The errors are those `publish` reacts to: `noStream` (nobody answered, with the
    /// connection's `noResponders` as `connectionError`), `timeout` or `connection` (with the
    /// connection's error), or the API's (`wrongLastSequence`, a 503 from a stream between
    /// leaders). Whoever gets an error retries through `publish` when it wants to. `headers` go
    /// with the message, beside the options' own. Loop only.
    package func publishAttemptOnLoop(_ subject: String, payload: [UInt8], headers: NATSHeaders? = nil, options: JetStreamPublishOptions,
                                      completion: @escaping @Sendable (Result<JetStreamPubAck, JetStreamError>) -> Void) {
        let headers = options.applied(to: headers)
        connection.requestOnLoop(subject, payload: payload, headers: headers, timeout: NATSConnection.nanoseconds(options.attemptTimeout)) { result in
            switch result {
            case let .success(reply):
                if reply.status == nil, let ack = JetStreamPubAck(plain: reply.payload) { return completion(.success(ack)) }
                do throws(JetStreamError) {
                    completion(.success(try Self.decode(reply, as: JetStreamPubAck.self)))
                } catch {
                    completion(.failure(error))
                }
            case let .failure(error) where error.kind == .noResponders:
                completion(.failure(JetStreamError(.noStream, reason: "no stream takes subject '\(subject)' (nobody answered)", connectionError: error)))
            case let .failure(error):
                completion(.failure(JetStreamError(error, doing: "publishing to '\(subject)'")))
            }
        }
    }

    /// Whether `publish` would try again after an attempt failed with `error` (a timeout, a lost
    /// connection, a full buffer while reconnecting, nobody answering, a stream between leaders),
    /// and whether that attempt may have been stored without its acknowledgement reaching us.
    package static func retries(after error: JetStreamError) -> (retry: Bool, mayHaveStored: Bool) {
        if let connectionError = error.connectionError {
            switch connectionError.kind {
            case .noResponders, .pendingBufferFull: return (true, false)
            case .timeout, .connectionLost: return (true, true)
            default: return (false, false)
            }
        }
        return (error.kind != .wrongLastSequence && error.status == 503, false)
    }

    /// After a retry found the expected sequence gone: the acknowledgement for an earlier
    /// attempt of this message id, if that attempt is what moved it. A replicated stream in
    /// nats-server 2.9 checks the expected sequence before the message id, so a retry of a
    /// stored message meets "wrong last sequence" where a single node says "duplicate"; the
    /// message right after the expected sequence tells which it was.
    private func storedEarlier(_ subject: String, messageID: String, stream named: String?, options: JetStreamPublishOptions) async throws(JetStreamError) -> JetStreamPubAck? {
        guard options.expectedLastSubjectSequence != nil || options.expectedLastSequence != nil else { return nil }
        let stream: String
        if let known = named ?? options.expectedStream {
            stream = known
        } else {
            struct Names: Decodable { var streams: [String]? }
            guard let name = try await call("STREAM.NAMES", body: Self.json(["subject": .text(subject)]), as: Names.self).streams?.first else { return nil }
            stream = name
        }
        let next: JetStreamStoredMessage
        do {
            if let expected = options.expectedLastSubjectSequence {
                next = try await nextMessage(stream: stream, subject: subject, from: expected + 1)
            } else {
                next = try await message(stream: stream, sequence: options.expectedLastSequence! + 1)
            }
        } catch where error.kind == .messageNotFound {
            return nil
        }
        guard next.headers?["Nats-Msg-Id"] == messageID else { return nil }
        return JetStreamPubAck(stream: stream, sequence: next.sequence, duplicate: true)
    }

    // MARK: Reading

    /// The message at `sequence` of `stream`, from its leader (`$JS.API.STREAM.MSG.GET`); throws
    /// `messageNotFound`.
    public func message(stream: String, sequence: UInt64) async throws(JetStreamError) -> JetStreamStoredMessage {
        try await getMessage(stream: stream, body: ["seq": .number(sequence)])
    }

    /// The last message on `subject` in `stream`, from its leader; throws `messageNotFound`.
    public func lastMessage(stream: String, subject: String) async throws(JetStreamError) -> JetStreamStoredMessage {
        try await getMessage(stream: stream, body: ["last_by_subj": .text(subject)])
    }

    /// The first message on `subject` at or after `sequence`; throws `messageNotFound`.
    public func nextMessage(stream: String, subject: String, from sequence: UInt64) async throws(JetStreamError) -> JetStreamStoredMessage {
        try await getMessage(stream: stream, body: ["seq": .number(sequence), "next_by_subj": .text(subject)])
    }

    /// The message at `sequence`, by direct get (`$JS.API.DIRECT.GET`): any replica answers,
    /// so a stream created with `allowDirect` spreads its reads. Throws `messageNotFound`.
    public func directMessage(stream: String, sequence: UInt64) async throws(JetStreamError) -> JetStreamStoredMessage {
        let name = try Self.checkName(stream)
        return try await directGet("\(apiPrefix).DIRECT.GET.\(name)", body: Self.json(["seq": .number(sequence)]))
    }

    /// The last message on `subject`, by direct get from any replica. Throws `messageNotFound`.
    public func directLastMessage(stream: String, subject: String) async throws(JetStreamError) -> JetStreamStoredMessage {
        let name = try Self.checkName(stream)
        return try await directGet("\(apiPrefix).DIRECT.GET.\(name).\(subject)", body: [])
    }

    // MARK: Inside

    /// A JSON value small enough to build requests from.
    enum Field: Sendable {
        case number(UInt64)
        case text(String)
        case flag(Bool)
    }

    private struct Success: Decodable {}

    private struct APIErrorBody: Decodable {
        struct Detail: Decodable {
            var code: Int?
            var err_code: Int?
            var description: String?
        }
        var error: Detail?
        var stream: String?
    }

    private struct MessageGetResponse: Decodable { var message: JetStreamRawMessage }

    private func getMessage(stream: String, body: [String: Field]) async throws(JetStreamError) -> JetStreamStoredMessage {
        let name = try Self.checkName(stream)
        let response = try await call("STREAM.MSG.GET.\(name)", body: Self.json(body), as: MessageGetResponse.self)
        return try response.message.stored()
    }

    private func directGet(_ subject: String, body: [UInt8]) async throws(JetStreamError) -> JetStreamStoredMessage {
        let reply: NATSMessage
        do {
            reply = try await connection.request(subject, payload: body, timeout: timeout)
        } catch {
            throw JetStreamError(error, doing: "a direct get on '\(subject)'")
        }
        if let status = reply.status, status >= 300 {
            let kind: JetStreamError.Kind = status == 404 ? .messageNotFound : .api
            throw JetStreamError(kind, status: status, reason: "direct get on '\(subject)': \(status) \(reply.headers?.statusDescription ?? "")")
        }
        guard let headers = reply.headers, let subjectHeader = headers["Nats-Subject"],
              let sequence = headers["Nats-Sequence"].flatMap(UInt64.init) else {
            throw JetStreamError(.badResponse, reason: "a direct get's answer lacks Nats-Subject or Nats-Sequence")
        }
        return JetStreamStoredMessage(subject: subjectHeader, sequence: sequence, headers: headers, payload: reply.payload, time: headers["Nats-Time-Stamp"])
    }

    /// One API call: the request, then the answer decoded or its error thrown; unanswered
    /// within `timeout` (the JetStream's own by default), a timeout.
    func call<Response: Decodable>(_ operation: String, body: [UInt8], as type: Response.Type,
                                   timeout: Duration? = nil) async throws(JetStreamError) -> Response {
        let subject = "\(apiPrefix).\(operation)"
        let reply: NATSMessage
        do {
            reply = try await connection.request(subject, payload: body, timeout: timeout ?? self.timeout)
        } catch {
            if error.kind == .noResponders {
                throw JetStreamError(.api, status: 503, reason: "nobody answers \(subject): is JetStream enabled?", connectionError: error)
            }
            throw JetStreamError(error, doing: subject)
        }
        return try Self.decode(reply, as: type)
    }

    static func decode<Response: Decodable>(_ reply: NATSMessage, as type: Response.Type) throws(JetStreamError) -> Response {
        if let status = reply.status, status >= 300 {
            throw JetStreamError(.api, status: status, reason: "answered with status \(status) \(reply.headers?.statusDescription ?? "")")
        }
        let data = Data(reply.payload)
        let decoder = JSONDecoder()
        // An answer is decoded once, not twice, unless it names an error: JSON decoding is most of
        // what an acknowledgement costs (a publish's, on every proposal).
        if mentionsError(reply.payload), let failure = try? decoder.decode(APIErrorBody.self, from: data), let detail = failure.error {
            throw JetStreamError(.of(errorCode: detail.err_code), status: detail.code, errorCode: detail.err_code,
                                 reason: detail.description ?? "the API reported an error", stream: failure.stream)
        }
        do {
            return try decoder.decode(type, from: data)
        } catch {
            throw JetStreamError(.badResponse, reason: "cannot decode \(Response.self): \(error); got \(String(decoding: reply.payload.prefix(200), as: UTF8.self))")
        }
    }

    /// Whether `payload` holds the key `"error"` anywhere (an API error's answer always does).
    static func mentionsError(_ payload: [UInt8]) -> Bool {
        let key: [UInt8] = Array("\"error\"".utf8)
        guard payload.count >= key.count else { return false }
        for start in 0...(payload.count - key.count) where payload[start] == key[0] {
            if payload[start..<start + key.count].elementsEqual(key) { return true }
        }
        return false
    }

    static func json(_ fields: [String: Field]) -> [UInt8] {
        var object: [String: Any] = [:]
        for (key, value) in fields {
            switch value {
            case let .number(number): object[key] = number
            case let .text(text): object[key] = text
            case let .flag(flag): object[key] = flag
            }
        }
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])).map(Array.init) ?? Array("{}".utf8)
    }

    static func encode<Value: Encodable>(_ value: Value) throws(JetStreamError) -> [UInt8] {
        do {
            return Array(try JSONEncoder().encode(value))
        } catch {
            throw JetStreamError(.badResponse, reason: "cannot encode \(Value.self): \(error)")
        }
    }

    static func checkName(_ name: String) throws(JetStreamError) -> String {
        guard !name.isEmpty, !name.contains(where: { $0 == "." || $0 == "*" || $0 == ">" || $0.isWhitespace }) else {
            throw JetStreamError(.api, reason: "'\(name)' is not a stream or consumer name (empty, or with '.', '*', '>' or whitespace)")
        }
        return name
    }
}
