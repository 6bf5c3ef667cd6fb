import Foundation
import Synchronization
import Testing
import TandemNATS
import TandemNet
import TandemHarness

/// The connection against a real nats-server on loopback, started and stopped by each test.
@Suite(.enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"))
struct NATSConnectionProcessTests {
    @Test func publishesAndSubscribesWithHeadersInOrder() async throws {
        let server = try NATSServerProcess()
        defer { server.stop() }
        let connection = try await NATSConnection.connect(to: server.url)
        let subscription = try await connection.subscribe(to: "greet.*")
        try await connection.flush()
        var headers = NATSHeaders()
        headers["Tandem-Kind"] = "hello"
        headers.append("Tandem-Kind", "again")
        try await connection.publish("greet.a", payload: "one".bytes)
        try await connection.publish("greet.b", payload: "two".bytes, headers: headers)
        try await connection.publish("other", payload: "not for us".bytes)
        try await connection.publish("greet.c", payload: [])
        let messages = try await collect(3, from: subscription)
        #expect(messages.map(\.subject) == ["greet.a", "greet.b", "greet.c"])
        #expect(messages.map(\.payload.text) == ["one", "two", ""])
        #expect(messages[0].headers == nil)
        #expect(messages[1].headers?.values(for: "tandem-kind") == ["hello", "again"])
        #expect(connection.serverInfo?.headers == true)
        await connection.close()
        #expect(connection.isClosed)
        await #expect { try await connection.publish("greet.a", payload: []) } throws: { ($0 as? NATSError)?.kind == .closed }
        await #expect { _ = try await connection.request("greet.a", payload: []) } throws: { ($0 as? NATSError)?.kind == .closed }
        await connection.close()
    }

    @Test func requestsGetRepliesNoRespondersOrTimeOut() async throws {
        let server = try NATSServerProcess()
        defer { server.stop() }
        let responder = try await NATSConnection.connect(to: server.url)
        let requests = try await responder.subscribe(to: "echo")
        let silent = try await responder.subscribe(to: "silent")
        try await responder.flush()
        let answering = Task {
            for try await request in requests {
                guard let reply = request.replyTo else { continue }
                var headers = NATSHeaders()
                headers["Echoed"] = "yes"
                try await responder.publish(reply, payload: request.payload.reversed(), headers: headers)
            }
        }
        defer { answering.cancel() }

        let client = try await NATSConnection.connect(to: server.url)
        let replies = try await withThrowingTaskGroup(of: NATSMessage.self) { group in
            for index in 0..<20 { group.addTask { try await client.request("echo", payload: "ping \(index)".bytes, timeout: .seconds(5)) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(replies.map(\.payload.text)) == Set((0..<20).map { String("ping \($0)".reversed()) }))
        #expect(replies.allSatisfy { $0.headers?["Echoed"] == "yes" })

        await #expect { _ = try await client.request("nobody.home", payload: [], timeout: .seconds(5)) } throws: {
            ($0 as? NATSError)?.kind == .noResponders
        }
        let start = ContinuousClock.now
        await #expect { _ = try await client.request("silent", payload: [], timeout: .milliseconds(200)) } throws: {
            ($0 as? NATSError)?.kind == .timeout
        }
        #expect(ContinuousClock.now - start < .seconds(5))
        _ = silent
        await client.close()
        await responder.close()
    }

    @Test func acceptsTheRightUserAndPasswordAndRefusesOthers() async throws {
        let server = try NATSServerProcess(authentication: .userPassword(user: "relay", password: "s3cret"))
        defer { server.stop() }
        let connection = try await NATSConnection.connect(to: "nats://relay:s3cret@127.0.0.1:\(server.port)")
        try await connection.flush()
        await connection.close()
        for url in ["nats://relay:wrong@127.0.0.1:\(server.port)", "nats://127.0.0.1:\(server.port)"] {
            await #expect { _ = try await NATSConnection.connect(to: url) } throws: { error in
                guard let error = error as? NATSError else { return false }
                return error.kind == .authorizationFailed && error.server == "127.0.0.1:\(server.port)"
            }
        }
    }

    /// This machine's host name when /etc/hosts maps it to loopback (it does in most
    /// containers), so that resolving a name sends nothing off the machine.
    static let loopbackHostName: String? = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return nil }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard !name.isEmpty, name != "localhost", (try? String(contentsOfFile: "/etc/hosts", encoding: .utf8))?
            .split(separator: "\n").contains(where: { line in
                let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                return fields.first?.hasPrefix("127.") == true && fields.dropFirst().contains { $0 == name }
            }) == true else { return nil }
        return name
    }()

    @Test(.enabled(if: loopbackHostName != nil, "the host name is not mapped to loopback in /etc/hosts"))
    func resolvesAHostNameOffTheLoop() async throws {
        let server = try NATSServerProcess()
        defer { server.stop() }
        let name = try #require(Self.loopbackHostName)
        let connection = try await NATSConnection.connect(to: "nats://\(name):\(server.port)")
        try await connection.flush()
        #expect(connection.connectedServer?.host == name)
        await connection.close()
    }

    @Test func acceptsTheRightTokenAndRefusesAWrongOne() async throws {
        let server = try NATSServerProcess(authentication: .token("t0ken"))
        defer { server.stop() }
        let connection = try await NATSConnection.connect(to: "nats://t0ken@127.0.0.1:\(server.port)")
        try await connection.flush()
        await connection.close()
        await #expect { _ = try await NATSConnection.connect(to: "nats://other@127.0.0.1:\(server.port)") } throws: {
            ($0 as? NATSError)?.kind == .authorizationFailed
        }
    }

    @Test func refusesAMessageBeyondMaxPayloadAndKeepsServing() async throws {
        let server = try NATSServerProcess(maximumPayload: 1024)
        defer { server.stop() }
        let connection = try await NATSConnection.connect(to: server.url)
        #expect(connection.serverInfo?.maxPayload == 1024)
        let subscription = try await connection.subscribe(to: "big")
        try await connection.flush()
        await #expect { try await connection.publish("big", payload: [UInt8](repeating: 7, count: 1025)) } throws: { error in
            guard let error = error as? NATSError else { return false }
            return error.kind == .payloadTooLarge && error.reason.contains("1024")
        }
        try await connection.publish("big", payload: [UInt8](repeating: 7, count: 1024))
        let messages = try await collect(1, from: subscription)
        #expect(messages.first?.payload.count == 1024)
        await connection.close()
    }

    @Test func cannotConnectWhereNoServerListensSaysWhere() async throws {
        let port = try TCPSocket.listening(on: SocketAddress(host: "127.0.0.1", port: 0)).localAddress().port
        var configuration = NATSConfiguration()
        configuration.connectTimeout = 1_000_000_000
        await #expect { _ = try await NATSConnection.connect(to: "nats://127.0.0.1:\(port)", configuration: configuration) } throws: { error in
            guard let error = error as? NATSError else { return false }
            return error.kind == .cannotConnect && error.reason.contains("127.0.0.1:\(port)")
        }
    }

    @Test func eventHandlersHearWhatEventsYieldUntilStoppedOrClosed() async throws {
        let server = try NATSServerProcess()
        defer { server.stop() }
        var configuration = NATSConfiguration()
        configuration.reconnectWait = 50_000_000
        configuration.maximumReconnectWait = 200_000_000
        let connection = try await NATSConnection.connect(to: server.url, configuration: configuration)
        let heard = Mutex<[String]>([])
        let stoppedHeard = Mutex(0)
        let (changes, changed) = AsyncStream.makeStream(of: Void.self)
        connection.handleEvents { event in
            let name = switch event {
            case .connected: "connected"
            case .disconnected: "disconnected"
            case .reconnected: "reconnected"
            case .serverError: "serverError"
            case .closed: "closed"
            }
            heard.withLock { $0.append(name) }
            changed.yield()
        }
        let stopped = connection.handleEvents { _ in stoppedHeard.withLock { $0 += 1 } }
        connection.stopHandlingEvents(stopped)
        // The flush's answer comes after the handlers' registration, queued on the loop before it.
        try await connection.flush()

        server.kill()
        try server.start()
        try await within(10, "reconnection") {
            for await _ in changes where heard.withLock({ $0.contains("reconnected") }) { return }
        }
        await connection.close()
        let names = heard.withLock { $0 }
        #expect(names.first == "disconnected")
        #expect(names.contains("reconnected"))
        #expect(names.last == "closed")
        #expect(stoppedHeard.withLock { $0 } == 0)
    }

    @Test func reconnectsWhenTheServerComesBackAndResubscribes() async throws {
        let server = try NATSServerProcess()
        defer { server.stop() }
        var configuration = NATSConfiguration()
        configuration.reconnectWait = 50_000_000
        configuration.maximumReconnectWait = 200_000_000
        let connection = try await NATSConnection.connect(to: server.url, configuration: configuration)
        let events = connection.events()
        let subscription = try await connection.subscribe(to: "after.restart")
        try await connection.flush()

        server.kill()
        try server.start()
        // Published while the client may still be away: buffered, sent on reconnection.
        try await connection.publish("after.restart", payload: "from the same client".bytes)
        try await within(10, "reconnection") {
            for await event in events { if case .reconnected = event { return } }
        }
        try await connection.flush()
        let other = try await NATSConnection.connect(to: server.url)
        try await other.publish("after.restart", payload: "from another".bytes)
        let messages = try await collect(2, from: subscription, within: 10)
        #expect(Set(messages.map(\.payload.text)) == ["from the same client", "from another"])
        await other.close()
        await connection.close()
    }
}

/// A server that is not one: a TCP listener on loopback that sends `greeting` to its first
/// client, then closes.
private final class ImpostorServer: @unchecked Sendable {
    let port: UInt16
    private let descriptor: Int32
    private let done = DispatchSemaphore(value: 0)

    init(greeting: [UInt8]) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 4) == 0 else {
            close(descriptor)
            throw SystemCallError(call: "bind", errno: errno)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        let listener = descriptor
        let done = done
        Thread.detachNewThread {
            let client = accept(listener, nil, nil)
            if client >= 0 {
                _ = greeting.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                var sink = [UInt8](repeating: 0, count: 4096)
                // Until the client gives up on us.
                while recv(client, &sink, sink.count, 0) > 0 {}
                close(client)
            }
            done.signal()
        }
    }

    func stop() {
        shutdown(descriptor, Int32(SHUT_RDWR))
        close(descriptor)
    }
}

@Suite struct NATSImpostorIOTests {
    static let greetings: [String: [UInt8]] = [
        "not valid JSON": Array("INFO {not json\r\n".utf8),
        "longer than": [UInt8](repeating: UInt8(ascii: "A"), count: 200_000),
        "unknown operation": Array("HELLO there\r\n".utf8),
    ]

    @Test(arguments: ["not valid JSON", "longer than", "unknown operation"])
    func aServerThatSpeaksSomethingElseIsRefusedClearly(expected: String) async throws {
        let impostor = try ImpostorServer(greeting: Self.greetings[expected]!)
        defer { impostor.stop() }
        var configuration = NATSConfiguration()
        configuration.connectTimeout = 5_000_000_000
        await #expect { _ = try await NATSConnection.connect(to: "nats://127.0.0.1:\(impostor.port)", configuration: configuration) } throws: { error in
            guard let error = error as? NATSError else { return false }
            return error.kind == .cannotConnect && error.reason.contains(expected) && error.reason.contains("127.0.0.1:\(impostor.port)")
        }
    }
}
