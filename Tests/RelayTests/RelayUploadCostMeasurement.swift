import Foundation
import TandemNet
import TandemTestKit
import TandemHarness
import TandemWire
import Testing

/// Not a test of speed (it asserts only that the uploads complete) but a measurement: the relay's CPU seconds (utime + stime of the `tandem serve` process, from
/// /proc/PID/stat) for one 10, 50 and 100 MiB upload, beside the time to copy as many bytes once.
/// Runs only when `TANDEM_MEASURE_UPLOAD` is set; `TANDEM_EXECUTABLE` may name a release build:
///
///     swift build -c release --product tandem
///     TANDEM_MEASURE_UPLOAD=1 TANDEM_EXECUTABLE=.build/release/tandem \
///         swift test --skip-build --filter RelayUploadCostMeasurementProcessTests
@Suite("Relay upload cost (measurement)", .serialized,
       .enabled(if: ProcessInfo.processInfo.environment["TANDEM_MEASURE_UPLOAD"] != nil))
struct RelayUploadCostMeasurementProcessTests {
    @Test("relay CPU seconds of one upload beside one copy", arguments: [10, 50, 100])
    func upload(mebibytes: Int) throws {
        let relay = try ServeProcess(arguments: ["--memory-limit", "1G"])
        defer { relay.stop() }
        let size = mebibytes * 1024 * 1024
        let data = [UInt8](repeating: 0x5A, count: size)
        let entry = RelayAttachmentEntry(id: UUID(), owner: UUID(), size: size, metadata: [])
        var frames = RelayFrame.attachmentAdd(sequence: 1, entry: entry).encoded()
        frames.reserveCapacity(size + size / 100)
        var sequence: UInt64 = 1
        for offset in stride(from: 0, to: size, by: RelayWireLimits.attachmentChunkSize) {
            sequence += 1
            frames += RelayFrame.attachmentChunk(sequence: sequence, id: entry.id,
                                                 data: data[offset..<min(offset + RelayWireLimits.attachmentChunkSize, size)]).encoded()
        }
        let client = try RawRelayClient(port: relay.port)
        try client.admit(session: UUID(), key: [UInt8](repeating: 1, count: 32), create: true)
        let before = try #require(RelayUploadCostMeasurementProcessTests.cpuSeconds(of: relay.pid))
        try client.send(frames, within: .seconds(120))
        var done = false
        while !done, let frame = try client.nextFrame(timeout: .seconds(120)) {
            if case let .outcome(_, 1, fault) = frame {
                #expect(fault == nil)
                done = true
            }
        }
        #expect(done)
        let cpu = try #require(RelayUploadCostMeasurementProcessTests.cpuSeconds(of: relay.pid)) - before
        var copies: [Double] = []
        for _ in 0..<5 {
            var copy = data
            let start = ContinuousClock.now
            // A write to a shared array copies it whole, once.
            copy[0] ^= 1
            copies.append((ContinuousClock.now - start) / .seconds(1))
            withExtendedLifetime(copy) {}
        }
        let copy = copies.sorted()[copies.count / 2]
        print(String(format: "upload %3d MiB: relay CPU %.3f s; one copy %.4f s (median of 5)", mebibytes, cpu, copy))
    }

    /// utime + stime of `pid` in seconds.
    static func cpuSeconds(of pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after the command name: state is field 3, utime 14, stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

extension RawRelayClient {
    /// Sends all of `bytes`, waiting while the socket is full, for at most `timeout`.
    func send(_ bytes: [UInt8], within timeout: Duration) throws {
        var offset = 0
        let deadline = ContinuousClock.now + timeout
        while offset < bytes.count, ContinuousClock.now < deadline {
            if let written = try socket.write(bytes[offset...]) {
                offset += written
            } else {
                Thread.sleep(forTimeInterval: 0.0005)
            }
        }
    }
}
