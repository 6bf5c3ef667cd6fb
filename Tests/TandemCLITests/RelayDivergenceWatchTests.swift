import Foundation
import Testing
import TandemTestKit
import TandemHarness
import TandemParty

/// A relay that shows people different histories, caught by real `tandem` processes: a relay
/// double (`TandemDivergentRelay`, a process of its own built only for tests) hands Cy the next
/// two ordered records with their contents exchanged under the same two orders, while Ana and
/// Ben get them as ordered; the participants compare their chain heads over the order in their health
/// reports and one of them says so (`relay-divergence`) within two seconds of the exchange.
@Suite(.serialized, .timeLimit(.minutes(2))) struct RelayDivergenceWatchProcessTests {
    /// The relay double, beside `tandem` in the build directory.
    static var doublePath: String {
        URL(fileURLWithPath: TandemProcess.executablePath).deletingLastPathComponent().appendingPathComponent("TandemDivergentRelay").path
    }

    @Test func aRelayThatExchangesTwoRecordsForOneParticipantIsFoundOutWithinTwoSeconds() throws {
        let clip = SampleClip.h264BFrames.path
        let relay = try WatchProcess(executable: Self.doublePath, arguments: ["--victim", "cy"], name: "relay", acceptsCommands: true)
        defer { relay.kill() }
        let listening = try #require(relay.waitForLine(startingWith: "listening ", timeout: 20), "relay: \(relay.standardError)")
        let address = String(listening.dropFirst("listening ".count))
        func start(_ name: String, _ arguments: [String], invite: String? = nil) throws -> WatchProcess {
            try WatchProcess(executable: TandemProcess.executablePath, arguments: arguments + ["--name", name, "--events", "json"],
                             name: name, acceptsCommands: true, environment: invite == nil ? [:] : ["TANDEM_INVITE": invite])
        }
        let ana = try start("ana", ["host", clip, "--relay", address])
        defer { ana.kill() }
        let invite = try #require(ana.waitForLine(startingWith: "tandem://", timeout: 20), "no invite: \(ana.standardError)")
        let ben = try start("ben", ["join", clip], invite: invite)
        defer { ben.kill() }
        let cy = try start("cy", ["join", clip], invite: invite)
        defer { cy.kill() }
        let everyone = [ana, ben, cy]
        for process in [ben, cy] {
            #expect(process.waitUntil(timeout: 20) { $0.contains { $0.event == "joined" } }, "\(process.name): \(process.standardError)")
        }
        #expect(ana.send("play") != nil)
        // Everyone hears everyone's health before the relay turns.
        for process in everyone {
            #expect(process.waitUntil(timeout: 15) { events in
                Set(events.compactMap { if case .health(let health) = $0.payload { health.from } else { nil } }).count >= 2
            }, "\(process.name): \(process.lines.suffix(5))")
        }
        #expect(everyone.allSatisfy { process in !process.events.contains { $0.event == "relay-divergence" } })

        // The relay exchanges the next two records it sends Cy: Ana's pause and play.
        #expect(relay.send("swap") != nil)
        #expect(ana.send("pause") != nil)
        #expect(ana.send("play") != nil)
        let exchanged = try #require(relay.waitForLine(startingWith: "exchanged ", timeout: 15), "relay: \(relay.lines.suffix(3))")
        let exchangedAt = try #require(relay.timedLines.first { $0.line == exchanged }?.receivedNanoseconds)
        var found: (name: String, event: WatchEvent)?
        let deadline = Date().addingTimeInterval(10)
        while found == nil, Date() < deadline {
            found = everyone.lazy.compactMap { process in
                process.events.first { $0.event == "relay-divergence" }.map { (process.name, $0) }
            }.min { $0.1.receivedNanoseconds < $1.1.receivedNanoseconds }
            if found == nil { Thread.sleep(forTimeInterval: 0.02) }
        }
        let (finder, event) = try #require(found, "nobody found the relay out: \(everyone.map { $0.lines.suffix(3) })")
        let after = Double(event.receivedNanoseconds - exchangedAt) / 1e9
        // Reports go once a second: the next one after the exchange tells, within two seconds
        // (the processes' own scheduling aside).
        #expect(after < 2.0, "found by \(finder) \(after) s after the exchange")
        print("relay divergence found by \(finder) \(after) s after the exchange")
        guard case .relayDivergence(let divergence) = event.payload else { return }
        let orders = exchanged.split(separator: " ").dropFirst().compactMap { UInt64($0) }
        // The order named is a report's newest chain head, at or after the exchanged two.
        #expect(orders.count == 2 && orders.allSatisfy { $0 <= divergence.order },
                "\(divergence) against \(exchanged)")
        #expect(finder == "cy" || divergence.with == "cy", "\(finder): \(divergence)")
    }
}
