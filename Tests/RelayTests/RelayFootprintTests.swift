import Foundation
@testable import TandemNet
import TandemWire
import Testing

/// Issue 12: the relay counts its own footprint. `--memory-limit` bounds what the relay accounts
/// for; the process's resident memory beyond its start (runtime, allocator slack) is measured by
/// the shell and checked at admission beside it.
@Suite("Relay footprint")
struct RelayFootprintTests {
    private let key = [UInt8](repeating: 2, count: 32)

    private func admission(_ session: UUID) -> CoreAdmission { CoreAdmission(key: key, session: session) }

    private func welcomed(_ directives: [RelayDirective]) -> Bool {
        directives.contains { if case .send(_, .welcome) = $0 { true } else { false } }
    }

    private func refusal(_ directives: [RelayDirective]) -> RelayFault? {
        for case let .send(_, .refusal(fault)) in directives { return fault }
        return nil
    }

    @Test("a footprint at the limit refuses newcomers and uploads while the budget's own count is low; existing sessions flow")
    func footprintRefusesAdmission() {
        var configuration = RelayCoreConfiguration()
        configuration.memoryLimit = 1024 * 1024
        var core = RelayCore(configuration: configuration)
        let session = UUID()
        let (alice, bob) = (RelayConnectionID(1), RelayConnectionID(2))
        #expect(welcomed(admission(session).admit(&core, alice, TestIdentities.make(), create: true, at: 0)))
        #expect(welcomed(admission(session).admit(&core, bob, TestIdentities.make(), create: false, at: 0)))
        // The shell measured the process beyond its baseline at the limit; the budget counts little.
        core.footprintBytes = configuration.memoryLimit
        #expect(core.budgetBytes < configuration.memoryLimit, "shedding goes by the budget, which is not at its limit")
        #expect(core.admissionBytes == configuration.memoryLimit)
        #expect(refusal(admission(UUID()).admit(&core, RelayConnectionID(3), TestIdentities.make(), create: true, at: 1))?.code == .limitReached)
        #expect(refusal(admission(session).admit(&core, RelayConnectionID(4), TestIdentities.make(), create: false, at: 1))?.code == .limitReached)
        let message = core.onFrame(.message(sequence: 1, recipients: .everyone, reliable: true, body: [1, 2, 3]), from: alice, at: 2)
        #expect(CoreAdmission.frames(message, to: bob).count == 1, "an existing session keeps flowing")
        let entry = RelayAttachmentEntry(id: UUID(), owner: UUID(), size: 10, metadata: [])
        _ = core.onFrame(.attachmentAdd(sequence: 2, entry: entry), from: alice, at: 3)
        let refused = core.onFrame(.attachmentChunk(sequence: 3, id: entry.id, data: [UInt8](repeating: 0, count: 10)[...]), from: alice, at: 4)
        let faults = CoreAdmission.frames(refused, to: alice).compactMap { if case let .outcome(_, _, fault) = $0 { fault } else { nil } }
        #expect(faults.first?.code == .limitReached)
        #expect(core.limitCounts.memory == 3)
        // Just under the limit, a newcomer is let in again.
        core.footprintBytes = configuration.memoryLimit - 64 * 1024
        #expect(welcomed(admission(session).admit(&core, RelayConnectionID(5), TestIdentities.make(), create: false, at: 5)))
    }

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
        // 32 MiB touched page by page must show (resident memory, not just address space).
        let size = 32 * 1024 * 1024
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 4096)
        defer { block.deallocate() }
        for offset in stride(from: 0, to: size, by: 4096) { block[offset] = 1 }
        let after = try #require(ProcessResidentMemory.current())
        #expect(after - before >= size / 2, "resident grew \(after - before) bytes after touching \(size)")
        withExtendedLifetime(block) {}
    }

    @Test("a relay that counts its footprint reports it; one that does not reports 0")
    func serverReportsFootprint() throws {
        // Both baselines are read as the relays are made; 64 MiB is touched after.
        let counting = try RelayServer(address: SocketAddress(host: "127.0.0.1", port: 0), countsResidentMemory: true)
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
