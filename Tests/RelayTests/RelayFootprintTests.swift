import Foundation
@testable import TandemNet
import TandemClock
import TandemWire
import Testing

/// Issue 12: the relay counts its own footprint. `--memory-limit` bounds what the relay accounts
/// for; the process's resident memory beyond its start (runtime, allocator slack) is measured by
/// the shell and checked at admission beside it.
// Serialized: each test measures this whole process's resident memory, which another of them
// allocating or freeing tens of MiB at the same time would move.
@Suite("Relay footprint", .serialized)
struct RelayFootprintIOTests {
    // Admission refused by the footprint while the budget's count is low: `RelayLimitsTests.memoryBudget(byFootprint:)`.

    @Test("the footprint is not added to the budget's count: the larger of the two is checked")
    func largerOfTheTwo() {
        var core = RelayCore()
        core.shellBytes = 5_000
        core.footprintBytes = 3_000
        #expect(core.admissionBytes == 5_000)
        core.footprintBytes = 9_000
        #expect(core.admissionBytes == 9_000)
        #expect(core.budgetBytes == 5_000)
    }

    @Test("statm's second field, in pages, is the resident size; anything else is no reading")
    func statmParsing() {
        #expect(ProcessResidentMemory.residentBytes(statm: Array("2371 815 602 1 0 137 0\n".utf8), pageSize: 4096) == 815 * 4096)
        #expect(ProcessResidentMemory.residentBytes(statm: Array("2371\n".utf8), pageSize: 4096) == nil)
        #expect(ProcessResidentMemory.residentBytes(statm: Array("2371 8x5 602\n".utf8), pageSize: 4096) == nil)
        #expect(ProcessResidentMemory.residentBytes(statm: Array("1 99999999999999999999999 2\n".utf8), pageSize: 4096) == nil)
        #expect(ProcessResidentMemory.residentBytes(statm: [UInt8](), pageSize: 4096) == nil)
    }

    @Test("this process's resident memory reads, and grows by what it touches")
    func readsThisProcess() throws {
        let before = try #require(ProcessResidentMemory.current())
        #expect(before > 0)
        // 96 MiB touched page by page must show (resident memory, not just address space). Above
        // glibc's largest mmap threshold (32 MiB), so that the block is fresh pages, never free
        // heap that earlier tests left resident; a third is room for what other threads free
        // meanwhile.
        let size = 96 * 1024 * 1024
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 4096)
        defer { block.deallocate() }
        for offset in stride(from: 0, to: size, by: 4096) { block[offset] = 1 }
        let after = try #require(ProcessResidentMemory.current())
        #expect(after - before >= size / 3, "resident grew \(after - before) bytes after touching \(size)")
        withExtendedLifetime(block) {}
    }

    /// `epoch` is the served clock's offset: a negative `--session-epoch` starts it far below
    /// zero, where a first reading due "100 ms after 0" would never come.
    @Test("a relay that counts its footprint reports it, whatever its session clock's epoch; one that does not reports 0",
          arguments: [Int64(0), -(Int64(1) << 60)])
    func serverReportsFootprint(epoch: Int64) throws {
        // Both baselines are read as the relays are made; 64 MiB is touched after.
        let clock = SkewedClock(base: SystemClock(), offset: epoch, driftPPM: 0)
        let counting = try RelayServer(address: SocketAddress(host: "127.0.0.1", port: 0), clock: clock, countsResidentMemory: true)
        let quiet = try RelayServer(address: SocketAddress(host: "127.0.0.1", port: 0))
        let size = 64 * 1024 * 1024
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 4096)
        defer { block.deallocate() }
        for offset in stride(from: 0, to: size, by: 4096) { block[offset] = 1 }
        counting.start()
        defer { counting.stop() }
        quiet.start()
        defer { quiet.stop() }
        // Read on the tick, every 100 ms: a bounded wait for the first reading.
        let deadline = ContinuousClock.now + .seconds(10)
        while counting.statistics.footprintBytes < size / 2, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(counting.statistics.footprintBytes >= size / 2)
        #expect(quiet.statistics.footprintBytes == 0)
        withExtendedLifetime(block) {}
    }
}
