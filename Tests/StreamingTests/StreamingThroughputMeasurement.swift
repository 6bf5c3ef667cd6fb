import Foundation
import Testing
import Tandem
import TandemIdentity
import TandemStreaming
import TandemTestKit

/// A measurement, not a test of speed (it asserts only that the bytes are right): one joiner
/// reading a holder's 256 MiB file through a real relay on loopback for 30 s, again and again,
/// printing each second's throughput. Runs only with `TANDEM_STREAM_MEASURE=1`:
///
///     TANDEM_STREAM_MEASURE=1 swift test --skip-build --filter StreamingThroughputMeasurementIOTests
@Suite(.enabled(if: ProcessInfo.processInfo.environment["TANDEM_STREAM_MEASURE"] != nil))
struct StreamingThroughputMeasurementIOTests {
    @Test func oneJoinerOverThirtySeconds() async throws {
        let party = try await SessionStreamingIOTests.party()
        defer { party.relay.shutdown() }
        let size = 256 * 1024 * 1024
        let pattern = StreamFixture(size: 1 << 20, seed: 5).bytes
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-measure-\(UUID().uuidString).bin").path
        FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        for _ in 0..<(size >> 20) { try handle.write(contentsOf: Data(pattern)) }
        try handle.close()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let identity = try ContentIdentity.of(file: path)
        let serving = SessionStreaming(session: party.host)
        defer { serving.close() }
        try serving.hold(file: path, identity: identity, name: "big.bin")
        let reading = SessionStreaming(session: party.guest)
        defer { reading.close() }
        _ = await reading.announcedIdentity(of: "big.bin", timeout: .seconds(10))
        let item = try reading.item(identity: identity)
        let perSecond = try await Task.detached { () -> [Double] in
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            var offset: Int64 = 0
            var seconds: [Double] = []
            var bytesThisSecond = 0
            let start = DispatchTime.now().uptimeNanoseconds
            var mark = start
            while seconds.count < 30 {
                let read = try buffer.withUnsafeMutableBytes { try item.read(at: offset, into: $0) }
                if read == 0 {
                    offset = 0
                    continue
                }
                let at = Int(offset % Int64(pattern.count))
                if buffer[0] != pattern[at] { throw StreamingError(description: "wrong byte at \(offset)") }
                offset += Int64(read)
                bytesThisSecond += read
                let now = DispatchTime.now().uptimeNanoseconds
                if now - mark >= 1_000_000_000 {
                    seconds.append(Double(bytesThisSecond) * 8 / (Double(now - mark) / 1e9) / 1e6)
                    bytesThisSecond = 0
                    mark = now
                }
            }
            return seconds
        }.value
        let sorted = perSecond.sorted()
        print("stream throughput over 30 s (Mbit/s each second): min \(sorted.first!), p50 \(sorted[15]), max \(sorted.last!); "
              + "mean \(perSecond.reduce(0, +) / 30); retries \(item.statistics.retries), evictions \(item.statistics.evictions)")
        #expect(perSecond.count == 30)
    }
}
