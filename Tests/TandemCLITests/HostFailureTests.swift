#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TandemTestKit
import TandemHarness

/// `tandem host --player mpv` whose mpv cannot run (an `mpv` first on the PATH that exits at
/// once, as a broken install does): the command says so in one line, exits non-zero, and leaves
/// nothing it started running: its relay process is gone and its port refuses connections as the
/// command returns, rather than lingering for others who never came.
@Suite(.serialized, .timeLimit(.minutes(1))) struct HostFailureProcessTests {
    @Test func anMpvThatCannotRunLeavesNothingRunning() throws {
        // A directory of its own: the relay's records (`XDG_RUNTIME_DIR/tandem`) and the mpv.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-host-failure-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory + "/bin", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let mpv = directory + "/bin/mpv"
        try "#!/bin/sh\necho 'mpv: cannot start here' >&2\nexit 1\n".write(toFile: mpv, atomically: true, encoding: .utf8)
        chmod(mpv, 0o755)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: TandemProcess.executablePath)
        process.arguments = ["host", SampleClip.h264.path, "--bind", "127.0.0.1", "--port", "0", "--name", "host",
                             "--player", "mpv", "--mpv-args", "--ao=null"]
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = directory + "/bin:/usr/bin:/bin"
        environment["XDG_RUNTIME_DIR"] = directory
        environment["DISPLAY"] = nil
        environment["WAYLAND_DISPLAY"] = nil
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let started = Date()
        while process.isRunning, Date().timeIntervalSince(started) < 30 { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let standardOutput = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let standardError = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)

        #expect(process.terminationStatus != 0, "\(standardError)")
        let said = standardError.split(separator: "\n").filter { $0.contains("cannot run mpv") }
        #expect(said.count == 1 && said[0].hasPrefix("tandem: cannot run mpv") && said[0].contains("mpv: cannot start here"),
                "\(standardError)")
        // The relay it started: the port in the invite refuses, and no process of it is left.
        let invite = try #require(standardOutput.split(separator: "\n").first { $0.hasPrefix("tandem://") }, "\(standardOutput)")
        let port = try #require(invite.split(separator: "/")[1].split(separator: ":").last.flatMap { UInt16($0) }, "\(invite)")
        #expect(!Self.accepts(port: port), "the relay still listens on \(port)")
        #expect(Self.processes(naming: directory).isEmpty, "left running: \(Self.processes(naming: directory))")
    }

    /// Whether 127.0.0.1:`port` accepts a TCP connection.
    static func accepts(port: UInt16) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// The live processes whose command line names `text`, with their command lines.
    static func processes(naming text: String) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.filter { Int32($0) != nil }.compactMap { pid -> String? in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
            let line = String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\0", with: " ")
            // A zombie has an empty command line: it runs nothing.
            return line.contains(text) ? "\(pid): \(line)" : nil
        }
    }
}
