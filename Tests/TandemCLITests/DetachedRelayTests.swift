#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TandemNet
import TandemHarness

/// The relay `tandem host` starts (`tandem serve --idle-exit S --record PATH`), as its own
/// process: it keeps its creation key beside its record (0600, never on its command line),
/// refuses a stranger's session, creates its host's, and exits S seconds after that session
/// ends although a stranger keeps connecting. The idle delay is shortened to 3 s here; `tandem
/// host` uses 10 s.
@Suite(.serialized, .timeLimit(.minutes(1))) struct DetachedRelayProcessTests {
    /// A records directory (0700) of its own.
    static func recordsDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-records-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return path
    }

    static func request(create: Bool, session: UUID, key: SigningKeyPair) -> RelayJoinRequest {
        RelayJoinRequest(sessionID: session, displayName: create ? "host" : "guest", sessionKey: key, createIfAbsent: create, activity: [])
    }

    /// Opens and closes a TCP connection to 127.0.0.1:`port`, as a stranger probing it would.
    static func knock(_ port: UInt16) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        close(descriptor)
    }

    @Test("only the key's holder creates; the relay exits 3 s after the last session though a stranger connects every 0.5 s")
    func creationKeyAndIdleExit() async throws {
        let records = try Self.recordsDirectory()
        defer { try? FileManager.default.removeItem(atPath: records) }
        let relay = try ServeProcess(arguments: ["--idle-exit", "3", "--record", records + "/relay-PORT.json"])
        defer { relay.stop() }
        let keyPath = records + "/relay-\(relay.port).key"
        let attributes = try FileManager.default.attributesOfItem(atPath: keyPath)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let key = [UInt8](try #require(FileManager.default.contents(atPath: keyPath)))
        #expect(key.count == RelayCreationKey.length)
        let commandLine = try #require(FileManager.default.contents(atPath: "/proc/\(relay.pid)/cmdline"))
        #expect(!String(decoding: commandLine, as: UTF8.self).contains("key"))

        // A stranger knocks every half second for the whole test.
        let knocking = Task.detached {
            while !Task.isCancelled {
                Self.knock(relay.port)
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
        defer { knocking.cancel() }

        // As `tandem host` does, the host touches the record (the relay's idle count restarts)
        // and creates its session with the key.
        #expect(utimensat(AT_FDCWD, records + "/relay-\(relay.port).json", nil, 0) == 0)
        let session = UUID()
        let sessionKey = SigningKeyPair()
        var configuration = RelayLinkConfiguration()
        configuration.creationKey = key
        let host = try await NetworkRelayConnector(host: "127.0.0.1", port: relay.port, configuration: configuration)
            .join(Self.request(create: true, session: session, key: sessionKey))
        // A stranger's own session is refused; a guest of the host's joins without any key.
        let stranger = NetworkRelayConnector(host: "127.0.0.1", port: relay.port)
        do {
            let link = try await stranger.join(Self.request(create: true, session: UUID(), key: SigningKeyPair()))
            await link.leave()
            Issue.record("a stranger created a session")
        } catch {
            #expect(error.code == .creationRefused, "\(error)")
            #expect(error.description.contains("only for its own host"), "\(error)")
        }
        let guest = try await stranger.join(Self.request(create: false, session: session, key: sessionKey))
        // The session keeps the relay alive past its idle delay, knocks or not.
        try await Task.sleep(for: .seconds(4))
        #expect(relay.isRunning)
        await guest.leave()
        await host.leave()
        let ended = Date()
        while relay.isRunning, Date().timeIntervalSince(ended) < 8 { try await Task.sleep(for: .milliseconds(50)) }
        let lived = Date().timeIntervalSince(ended)
        #expect(!relay.isRunning, "the relay still runs \(lived) s after its last session ended")
        #expect(lived > 2.5, "the relay exited \(lived) s after its last session ended, before its idle delay")
        #expect(!FileManager.default.fileExists(atPath: keyPath))
        #expect(!FileManager.default.fileExists(atPath: records + "/relay-\(relay.port).json"))
    }
}
