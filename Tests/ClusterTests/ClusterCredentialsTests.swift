import Foundation
import Testing
import TandemHarness

/// `tandem serve --cluster` against a real nats-server that wants a user and password: the
/// credentials come from `--cluster-credentials FILE` or `TANDEM_NATS_CREDENTIALS`, never appear
/// in the process's command line, and a secret put in the URL itself is taken with a warning.
@Suite("tandem serve's NATS credentials", .serialized)
struct ClusterCredentialsProcessTests {
    static let user = "relay"
    static let password = "s3cret-Pa55-\(UInt32.random(in: 0...UInt32.max))"

    /// A file holding `text`, readable by its owner only.
    static func credentialsFile(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-nats-credentials-\(UUID().uuidString)").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]))
        return path
    }

    /// The NUL-separated command line of process `pid`, as `ps` reads it.
    static func commandLine(of pid: Int32) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))
        return String(decoding: data.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }

    @Test("the credentials from a file, then from the environment, reach NATS and never the command line")
    func fileAndEnvironment() throws {
        let nats = try NATSServerProcess(authentication: .userPassword(user: Self.user, password: Self.password))
        defer { nats.stop() }
        let plain = "nats://127.0.0.1:\(nats.port)"
        let file = try Self.credentialsFile("# NATS for the relays\n\(Self.user):\(Self.password)\n")
        defer { try? FileManager.default.removeItem(atPath: file) }

        let fromFile = try ServeProcess(arguments: ["--cluster", plain, "--cluster-credentials", file])
        defer { fromFile.stop() }
        let fromEnvironment = try ServeProcess(arguments: ["--cluster", plain],
                                               environment: ["TANDEM_NATS_CREDENTIALS": "\(Self.user):\(Self.password)"])
        defer { fromEnvironment.stop() }
        for relay in [fromFile, fromEnvironment] {
            // Both got past NATS's authorization (a refusal ends the process before it listens).
            #expect(relay.isRunning)
            let line = try Self.commandLine(of: relay.pid)
            #expect(line.contains(plain), "\(line)")
            #expect(!line.contains(Self.password), "\(line)")
            #expect(!relay.printedText.contains(Self.password))
        }
        // The relay does not keep the variable for its children.
        let environ = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(fromEnvironment.pid)/environ"))
        #expect(!String(decoding: environ, as: UTF8.self).contains(Self.password))
    }

    @Test("wrong credentials in the file: exit 1 with NATS's refusal, the password never printed")
    func wrongCredentials() throws {
        let nats = try NATSServerProcess(authentication: .userPassword(user: Self.user, password: Self.password))
        defer { nats.stop() }
        let file = try Self.credentialsFile("\(Self.user):not-\(Self.password)\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let (status, text) = try ClusterServeFlagsProcessTests.serve(["--cluster", "nats://127.0.0.1:\(nats.port)", "--cluster-credentials", file])
        #expect(status == 1, "\(text)")
        #expect(text.contains("credentials"), "\(text)")
        #expect(!text.contains("not-\(Self.password)"), "\(text)")
    }

    @Test("a password in the URL is taken, with a warning on standard error")
    func urlWarns() throws {
        let nats = try NATSServerProcess(authentication: .userPassword(user: Self.user, password: Self.password))
        defer { nats.stop() }
        let relay = try ServeProcess(arguments: ["--cluster", "nats://\(Self.user):\(Self.password)@127.0.0.1:\(nats.port)"])
        defer { relay.stop() }
        let deadline = Date().addingTimeInterval(5)
        while !relay.printedText.contains("--cluster-credentials"), Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(relay.printedText.contains("serve: the --cluster URL carries a secret, which `ps` shows to every local user"), "\(relay.printedText)")
        #expect(!relay.printedText.contains(Self.password))
    }

    @Test("bad credentials sources are refused with one line that repeats no secret", arguments: [
        ("both", "tandem: --cluster-credentials and credentials in --cluster's URL: give them once, in the file"),
        ("empty", "holds no credentials; it wants one line, USER:PASS or a token"),
        ("missing", "tandem: --cluster-credentials cannot read /nonexistent/tandem-credentials"),
        ("alone", "tandem: --cluster-credentials goes with --cluster"),
    ])
    func refused(variant: String, line: String) throws {
        let file = try Self.credentialsFile(variant == "empty" ? "# nothing\n\n" : "\(Self.user):\(Self.password)\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        // Nothing listens on port 1 of loopback: had the flags passed, NATS would be refused instead.
        let arguments: [String] = switch variant {
        case "both": ["--cluster", "nats://\(Self.user):\(Self.password)@127.0.0.1:1", "--cluster-credentials", file]
        case "missing": ["--cluster", "nats://127.0.0.1:1", "--cluster-credentials", "/nonexistent/tandem-credentials"]
        case "alone": ["--cluster-credentials", file]
        default: ["--cluster", "nats://127.0.0.1:1", "--cluster-credentials", file]
        }
        let (status, text) = try ClusterServeFlagsProcessTests.serve(arguments)
        #expect(status == 64, "\(text)")
        #expect(text.split(separator: "\n").first?.contains(line) == true, "\(text)")
        #expect(!text.contains(Self.password), "\(text)")
    }
}
