#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import TandemNet

/// A real `nats-server` (Debian's 2.9) run as a process for a test: on free loopback ports,
/// with JetStream in a temporary store, optionally with user/password or token authentication
/// and a small `max_payload`, alone or as a node of a `NATSTestCluster`.
///
/// `start()` waits (bounded) until the server answers `/healthz`; `kill()` ends it with SIGKILL
/// as a crash would, and `start()` brings it back on the same ports and store. `stop()` (and
/// `deinit`, should a test end early) ends the process and removes the store, so that no server
/// outlives its test; servers left by a test process that crashed or was killed are ended by the
/// next one to start a server (their directory names the owner that is gone).
public final class NATSServerProcess: Sendable {
    /// How clients authenticate.
    public enum Authentication: Sendable, Hashable {
        /// Anyone may connect.
        case none
        /// A user and password.
        case userPassword(user: String, password: String)
        /// A token.
        case token(String)
    }

    /// The server's name (JetStream names stream leaders by it).
    public let name: String
    /// The client port, on 127.0.0.1.
    public let port: UInt16
    /// The monitoring (HTTP) port, on 127.0.0.1.
    public let monitorPort: UInt16
    /// The route port, when the server is a node of a cluster.
    public let routePort: UInt16?
    /// The JetStream store and the configuration and log files.
    public let directory: URL
    /// The authentication clients must give.
    public let authentication: Authentication
    private let removesDirectory: Bool
    private let process = Mutex<Process?>(nil)

    /// The path of the `nats-server` executable, or nil when it is not installed.
    public static var executablePath: String? {
        ["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Whether `nats-server` is installed (tests that need one are skipped without it).
    public static var isAvailable: Bool { executablePath != nil }

    /// Starts a single server (JetStream on) and waits until it is ready.
    public convenience init(authentication: Authentication = .none, maximumPayload: Int? = nil) throws {
        let ports = try NATSServerProcess.freePorts(2)
        try self.init(name: "n1", port: ports[0], monitorPort: ports[1], route: nil, authentication: authentication, maximumPayload: maximumPayload, directory: nil)
        try start()
    }

    /// A server not started yet: for `NATSTestCluster`, which starts its nodes together.
    package init(name: String, port: UInt16, monitorPort: UInt16, route: (port: UInt16, cluster: String, routes: [UInt16])?,
         authentication: Authentication, maximumPayload: Int?, directory: URL?) throws {
        self.name = name
        self.port = port
        self.monitorPort = monitorPort
        routePort = route?.port
        self.authentication = authentication
        if let directory {
            self.directory = directory.appendingPathComponent(name)
            removesDirectory = false
        } else {
            self.directory = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-nats-\(UUID().uuidString)")
            removesDirectory = true
        }
        _ = NATSServerProcess.reapOrphans
        try FileManager.default.createDirectory(at: self.directory.appendingPathComponent("store"), withIntermediateDirectories: true)
        let root = directory ?? self.directory
        try String(getpid()).write(to: root.appendingPathComponent("owner.pid"), atomically: true, encoding: .utf8)
        var config = """
        server_name: "\(name)"
        pid_file: "\(self.directory.appendingPathComponent("nats.pid").path)"
        listen: "127.0.0.1:\(port)"
        http: "127.0.0.1:\(monitorPort)"
        jetstream {
          store_dir: "\(self.directory.appendingPathComponent("store").path)"
          max_memory_store: 67108864
          max_file_store: 268435456
        }

        """
        if let maximumPayload { config += "max_payload: \(maximumPayload)\n" }
        switch authentication {
        case .none: break
        case let .userPassword(user, password): config += "authorization { user: \"\(user)\", password: \"\(password)\" }\n"
        case let .token(token): config += "authorization { token: \"\(token)\" }\n"
        }
        if let route {
            let routes = route.routes.map { "\"nats-route://127.0.0.1:\($0)\"" }.joined(separator: ", ")
            config += "cluster { name: \"\(route.cluster)\", listen: \"127.0.0.1:\(route.port)\", routes: [\(routes)] }\n"
        }
        try config.write(to: configurationFile, atomically: true, encoding: .utf8)
    }

    deinit { stop() }

    private var configurationFile: URL { directory.appendingPathComponent("nats.conf") }
    private var logFile: URL { directory.appendingPathComponent("nats.log") }

    /// `nats://[credentials@]127.0.0.1:PORT`.
    public var url: String { NATSServerProcess.url(ports: [port], authentication: authentication) }

    /// The URL of servers on `ports` with `authentication`.
    package static func url(ports: [UInt16], authentication: Authentication) -> String {
        let credentials: String
        switch authentication {
        case .none: credentials = ""
        case let .userPassword(user, password): credentials = "\(user):\(password)@"
        case let .token(token): credentials = "\(token)@"
        }
        return "nats://" + credentials + ports.map { "127.0.0.1:\($0)" }.joined(separator: ",")
    }

    /// Whether the process runs.
    public var isRunning: Bool { process.withLock { $0?.isRunning ?? false } }

    /// What the server logged so far (for a failing test's message).
    public var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// Starts the process (again, after `kill`) and, unless `waitUntilReady` is false, waits up to
    /// `timeout` seconds for `/healthz` to answer 200.
    public func start(waitUntilReady: Bool = true, timeout: Double = 20) throws {
        guard let path = NATSServerProcess.executablePath else { throw FixtureError("nats-server is not installed (scripts/install-deps)") }
        guard !isRunning else { return }
        let launched = Process()
        launched.executableURL = URL(fileURLWithPath: path)
        launched.arguments = ["-c", configurationFile.path]
        launched.standardInput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let log = try FileHandle(forWritingTo: logFile)
        log.seekToEndOfFile()
        launched.standardOutput = log
        launched.standardError = log
        try launched.run()
        process.withLock { $0 = launched }
        if waitUntilReady { try waitUntilHealthy(timeout: timeout) }
    }

    /// Waits up to `timeout` seconds for `/healthz` to answer 200 (JetStream ready).
    public func waitUntilHealthy(timeout: Double = 20) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard isRunning else { throw FixtureError("nats-server \(name) exited: \(log.suffix(2000))") }
            if NATSServerProcess.httpStatus(port: monitorPort, path: "/healthz") == 200 { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw FixtureError("nats-server \(name) not healthy within \(timeout) s: \(log.suffix(2000))")
    }

    /// Ends the process with SIGKILL, as a crash would; the store stays for `start()`.
    public func kill() {
        guard let running = process.withLock({ $0 }), running.isRunning else { return }
        Glibc.kill(running.processIdentifier, SIGKILL)
        running.waitUntilExit()
    }

    /// Ends the process (SIGTERM, then SIGKILL after 5 s) and removes its temporary files.
    public func stop() {
        if let running = process.withLock({ $0 }), running.isRunning {
            running.terminate()
            let deadline = Date().addingTimeInterval(5)
            while running.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            if running.isRunning { Glibc.kill(running.processIdentifier, SIGKILL) }
            running.waitUntilExit()
        }
        if removesDirectory { try? FileManager.default.removeItem(at: directory) }
    }

    // MARK: Leftovers

    /// Once a process: ends the servers that an earlier test process started and could not
    /// stop (it crashed, or was killed), found by their temporary directories, whose
    /// `owner.pid` names a process that is gone, and removes those directories.
    static let reapOrphans: Void = {
        let temporary = FileManager.default.temporaryDirectory
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: temporary.path) else { return }
        for entry in entries where entry.hasPrefix("tandem-nats-") {
            let root = temporary.appendingPathComponent(entry)
            guard let text = try? String(contentsOf: root.appendingPathComponent("owner.pid"), encoding: .utf8),
                  let owner = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)),
                  owner != getpid(), Glibc.kill(owner, 0) != 0, errno == ESRCH else { continue }
            let nodes = [root] + ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []).map { root.appendingPathComponent($0) }
            for node in nodes {
                guard let pidText = try? String(contentsOf: node.appendingPathComponent("nats.pid"), encoding: .utf8),
                      let pid = pid_t(pidText.trimmingCharacters(in: .whitespacesAndNewlines)),
                      let command = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8),
                      command.hasPrefix("nats-server") else { continue }
                Glibc.kill(pid, SIGKILL)
            }
            try? FileManager.default.removeItem(at: root)
        }
    }()

    // MARK: Ports and probes

    /// `count` distinct free TCP ports on 127.0.0.1 (free when asked; the kernel hands out
    /// ephemeral ports in sequence, so a port just released is not soon handed out again).
    package static func freePorts(_ count: Int) throws -> [UInt16] {
        var sockets: [TCPSocket] = []
        var ports: [UInt16] = []
        for _ in 0..<count {
            let socket = try TCPSocket.listening(on: try SocketAddress(host: "127.0.0.1", port: 0))
            ports.append(try socket.localAddress().port)
            sockets.append(socket)
        }
        withExtendedLifetime(sockets) {}
        return ports
    }

    /// The status code of `GET path` on 127.0.0.1:`port`, nil when nothing answers (1 s at most).
    static func httpStatus(port: UInt16, path: String) -> Int? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return nil }
        let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard send(descriptor, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else { return nil }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        guard count > 12 else { return nil }
        let line = String(decoding: buffer[..<count], as: UTF8.self)
        let parts = line.split(separator: " ")
        return parts.count >= 2 ? Int(parts[1]) : nil
    }
}
