import Testing
@testable import TandemNATS
import TandemNet

@Suite struct NATSParserTests {
    private func operations(_ text: String, chunk: Int = .max, parser: NATSParser = NATSParser()) throws -> [NATSParser.Operation] {
        var parser = parser
        var result: [NATSParser.Operation] = []
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            let end = min(index + chunk, bytes.count)
            parser.append(bytes[index..<end])
            index = end
            while let operation = try parser.next() { result.append(operation) }
        }
        return result
    }

    @Test(arguments: [1, 3, 7, 1000])
    func parsesEveryOperationWhateverTheChunks(chunk: Int) throws {
        let text = "INFO {\"server_id\":\"S\",\"server_name\":\"n1\",\"max_payload\":2048,\"headers\":true,\"connect_urls\":[\"127.0.0.1:4223\"]}\r\n"
            + "PING\r\npong\r\n+OK\r\n-ERR 'Authorization Violation'\r\n"
            + "MSG a.b 7 5\r\nhello\r\n"
            + "MSG a.b 7 _INBOX.x.1 0\r\n\r\n"
            + "HMSG a.b 9 r.1 25 30\r\nNATS/1.0\r\nK: v\r\nX:  y\r\n\r\nworld\r\n"
            + "HMSG _INBOX.x.2 1 16 16\r\nNATS/1.0 503\r\n\r\n\r\n"
            + "HMSG s 1 37 37\r\nNATS/1.0 100 Idle Heartbeat\r\nA: 1\r\n\r\n\r\n"
        let parsed = try operations(text, chunk: chunk)
        #expect(parsed.count == 10)
        guard case let .info(info) = parsed[0] else { Issue.record("no INFO first"); return }
        #expect(info.serverName == "n1" && info.maxPayload == 2048 && info.headers && info.connectURLs == ["127.0.0.1:4223"])
        #expect(Array(parsed[1...4]) == [.ping, .pong, .ok, .error("Authorization Violation")])
        #expect(parsed[5] == .message(NATSMessage(subject: "a.b", sid: 7, payload: Array("hello".utf8))))
        #expect(parsed[6] == .message(NATSMessage(subject: "a.b", sid: 7, replyTo: "_INBOX.x.1", payload: [])))
        guard case let .message(withHeaders) = parsed[7], case let .message(noResponders) = parsed[8],
              case let .message(heartbeat) = parsed[9] else { Issue.record("no HMSG"); return }
        #expect(withHeaders.replyTo == "r.1" && withHeaders.payload == Array("world".utf8))
        #expect(withHeaders.headers?["k"] == "v" && withHeaders.headers?["X"] == "y" && withHeaders.status == nil)
        #expect(noResponders.status == 503 && noResponders.payload.isEmpty)
        #expect(heartbeat.status == 100 && heartbeat.headers?.statusDescription == "Idle Heartbeat" && heartbeat.headers?["A"] == "1")
    }

    @Test(arguments: [
        ("BOGUS x\r\n", "unknown operation"),
        ("MSG a notanumber 5\r\nhello\r\n", "not a number"),
        ("MSG a 1 -5\r\n", "non-negative"),
        ("MSG a 1\r\n", "arguments"),
        ("MSG a 1 3\r\nhello\r\n", "not followed by CRLF"),
        ("HMSG a 1 30 10\r\n", "exceeds its total size"),
        ("HMSG a 1 5 5\r\nHTTP/\r\n", "does not start with NATS/1.0"),
        ("HMSG a 1 15 15\r\nNATS/1.0 5x\r\n\r\n\r\n", "three-digit code"),
        ("HMSG a 1 20 20\r\nNATS/1.0\r\nnocolo\r\n\r\n\r\n", "has no colon"),
        ("INFO {not json\r\n", "not valid JSON"),
    ])
    func refusesMalformedInputClearly(text: String, expected: String) {
        var parser = NATSParser()
        parser.append(Array(text.utf8))
        #expect {
            while try parser.next() != nil {}
        } throws: { error in
            (error as? NATSError)?.reason.contains(expected) == true
        }
        // Spent: every later call fails too, whatever arrives.
        parser.append(Array("PING\r\n".utf8))
        #expect(throws: NATSError.self) { try parser.next() }
    }

    @Test func boundsControlLinesAndPayloads() {
        var lines = NATSParser(maximumControlLine: 64, maximumPayload: 1024)
        // No CRLF yet, but already longer than any line may be: refused before it grows further.
        lines.append([UInt8](repeating: UInt8(ascii: "A"), count: 65))
        #expect { try lines.next() } throws: { ($0 as? NATSError)?.reason.contains("longer than 64") == true }

        var payloads = NATSParser(maximumControlLine: 64, maximumPayload: 1024)
        payloads.append(Array("MSG a 1 1025\r\n".utf8))
        #expect { try payloads.next() } throws: { ($0 as? NATSError)?.kind == .payloadTooLarge }

        var exact = NATSParser(maximumControlLine: 64, maximumPayload: 1024)
        exact.append(Array("MSG a 1 1024\r\n".utf8) + [UInt8](repeating: 1, count: 1024) + [13, 10])
        #expect((try? exact.next()) == .message(NATSMessage(subject: "a", sid: 1, payload: [UInt8](repeating: 1, count: 1024))))
    }

    @Test func encodesWhatTheProtocolSays() throws {
        #expect(String(decoding: try NATSEncoder.publish(subject: "a.b", replyTo: nil, headers: nil, payload: Array("hi".utf8)), as: UTF8.self)
            == "PUB a.b 2\r\nhi\r\n")
        var headers = NATSHeaders()
        headers["Nats-Msg-Id"] = "m1"
        #expect(String(decoding: try NATSEncoder.publish(subject: "a", replyTo: "r", headers: headers, payload: Array("xy".utf8)), as: UTF8.self)
            == "HPUB a r 29 31\r\nNATS/1.0\r\nNats-Msg-Id: m1\r\n\r\nxy\r\n")
        #expect(String(decoding: try NATSEncoder.subscribe(subject: "a.*.>", queue: "q", sid: 4), as: UTF8.self) == "SUB a.*.> q 4\r\n")
        #expect(String(decoding: NATSEncoder.unsubscribe(sid: 4), as: UTF8.self) == "UNSUB 4\r\n")
        let connect = String(decoding: NATSEncoder.connect(name: "t", credentials: .userPassword(user: "u", password: "p")), as: UTF8.self)
        for field in ["\"verbose\":false", "\"pedantic\":false", "\"headers\":true", "\"no_responders\":true", "\"user\":\"u\"", "\"pass\":\"p\""] {
            #expect(connect.contains(field), "CONNECT lacks \(field): \(connect)")
        }
        #expect(connect.hasPrefix("CONNECT {") && connect.hasSuffix("}\r\n"))
        #expect(String(decoding: NATSEncoder.connect(name: nil, credentials: .token("tk")), as: UTF8.self).contains("\"auth_token\":\"tk\""))
    }

    @Test(arguments: ["", "a..b", ".a", "a.", "a b", "a\r\nPUB x 1", "a.*", "a.>"])
    func refusesSubjectsThatCannotBePublished(subject: String) {
        #expect { _ = try NATSEncoder.publish(subject: subject, replyTo: nil, headers: nil, payload: []) } throws: {
            ($0 as? NATSError)?.kind == .invalidSubject
        }
    }

    @Test func refusesHeadersThatWouldBreakTheBlock() {
        for (name, value) in [("Bad:Name", "v"), ("Name", "a\r\nInjected: yes"), ("", "v"), ("Sp ace", "v")] {
            var headers = NATSHeaders()
            headers.append(name, value)
            #expect { _ = try headers.encoded() } throws: { ($0 as? NATSError)?.kind == .invalidHeaders }
        }
        #expect(throws: NATSError.self) { _ = try NATSEncoder.subscribe(subject: "a.>.b", queue: nil, sid: 1) }
    }
}

@Suite struct NATSParserByteByByteTests {
    @Test func aLongLineArrivingByteByByteParsesAndIsScannedOnce() throws {
        let urls = (0..<500).map { "\"127.0.0.1:\(10_000 + $0)\"" }.joined(separator: ",")
        let text = "INFO {\"server_id\":\"S\",\"connect_urls\":[\(urls)]}\r\nPING\r\n"
        var parser = NATSParser()
        var operations: [NATSParser.Operation] = []
        for byte in text.utf8 {
            parser.append([byte])
            while let operation = try parser.next() { operations.append(operation) }
        }
        guard case let .info(info)? = operations.first else { Issue.record("no INFO"); return }
        #expect(info.connectURLs.count == 500)
        #expect(operations.last == .ping)
    }
}
