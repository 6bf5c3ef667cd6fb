import Foundation
import Synchronization
import Testing
import TandemTestKit
import TandemMpv

/// mpv's JSON IPC, on a real headless mpv: commands, replies, observed properties, errors.
@Suite(.serialized, .timeLimit(.minutes(1))) struct MpvConnectionProcessTests {
    /// Runs `body` with a paused headless mpv on `file` and a connection to it; always stops mpv.
    func withMpv(_ file: String, _ body: (MpvProcess, MpvConnection) async throws -> Void) async throws {
        let process = try MpvProcess(file: file, ipcPath: MpvFixture.socketPath(), extraArguments: ["--vo=null", "--ao=null"])
        do {
            let connection = try await MpvConnection.connect(path: process.ipcPath, timeout: .seconds(10)) { process.isRunning }
            defer { connection.close() }
            try await body(process, connection)
        } catch {
            await process.terminate()
            throw error
        }
        await process.terminate()
        #expect(!process.isRunning)
    }

    @Test func observesPropertiesAndCarriesOutPauseSpeedAndSeek() async throws {
        try await withMpv(try MpvFixture.longClip()) { _, mpv in
            let seen = EventLog(mpv.events)
            defer { seen.stop() }
            try await mpv.observe("pause")
            try await mpv.observe("speed")
            try await mpv.observe("seeking")
            #expect(await eventually { (try? await mpv.get("time-pos"))?.double != nil })
            let paused = try await mpv.get("pause")
            #expect(paused == .bool(true))

            try await mpv.set("speed", 1.5)
            try await mpv.set("pause", false)
            #expect(await eventually { seen.properties.contains("pause=false") })
            let speed = try await mpv.get("speed")
            #expect(speed.double == 1.5)
            let reply = try await mpv.command(["seek", 10, "absolute", "exact"])
            #expect(reply.sentAt <= reply.receivedAt)
            // Settled once it is past the target and no longer seeking: `seeking` alone reads false
            // in the moment before mpv begins the seek (one fresh-clone run read 0.07 s here).
            #expect(await eventually {
                guard (try? await mpv.get("seeking"))?.bool == false else { return false }
                return ((try? await mpv.get("time-pos"))?.double ?? 0) >= 10
            })
            try await mpv.set("pause", true)
            let position = try #require(try await mpv.get("time-pos").double)
            #expect(position >= 10 && position < 10.5, "landed at \(position)")

            // Every change was announced, in order: resumed, faster, paused again.
            #expect(await eventually(5) {
                let properties = seen.properties
                guard let resumed = properties.firstIndex(of: "pause=false"), properties.contains("speed=1.5") else { return false }
                return properties[resumed...].contains("pause=true")
            }, "\(seen.properties)")
            #expect(seen.names.contains("seek") && seen.names.contains("playback-restart"))
        }
    }

    @Test func refusedCommandsSayWhyAndLeaveTheConnectionWorking() async throws {
        try await withMpv(SampleClip.h264BFrames.path) { _, mpv in
            await #expect { try await mpv.command(["no-such-command"]) } throws: { error in
                (error as? MpvError)?.isRefusal == true && "\(error)".contains("no-such-command")
            }
            await #expect { try await mpv.get("no-such-property") } throws: { error in
                "\(error)".contains("property not found")
            }
            await #expect { try await mpv.set("speed", "fast") } throws: { ($0 as? MpvError)?.isRefusal == true }
            let paused = try await mpv.get("pause")
            #expect(paused == .bool(true))
        }
    }

    @Test func twoConnectionsSeeTheSameMpv() async throws {
        try await withMpv(SampleClip.h264BFrames.path) { process, first in
            let second = try MpvConnection(path: process.ipcPath)
            defer { second.close() }
            let seen = EventLog(first.events)
            defer { seen.stop() }
            try await first.observe("pause")
            try await second.set("pause", false)
            #expect(await eventually(5) { seen.properties.contains("pause=false") }, "\(seen.properties)")
        }
    }

    @Test func connectingWhereNobodyListensFailsClearly() async throws {
        #expect { try MpvConnection(path: MpvFixture.socketPath()) } throws: { error in
            "\(error)".contains("cannot reach mpv's IPC socket")
        }
    }

    @Test func aClosedConnectionFailsCommandsAndEndsEvents() async throws {
        try await withMpv(SampleClip.h264BFrames.path) { process, _ in
            let mpv = try MpvConnection(path: process.ipcPath)
            let events = mpv.events
            mpv.close()
            #expect(mpv.isClosed)
            await #expect { try await mpv.get("pause") } throws: { ($0 as? MpvError)?.isDisconnection == true }
            let ended = EventLog(events)
            #expect(await eventually(5) { ended.finished })
        }
    }

    @Test func mpvThatCannotOpenTheFileFailsToLaunchWithItsOwnWords() async throws {
        var options = MpvFixture.headless()
        options.startTimeout = .seconds(5)
        await #expect { try await MpvPlayer.launch(file: "/nonexistent/film.mp4", options: options) } throws: { error in
            "\(error)".contains("cannot run mpv")
        }
    }
}

/// Collects a connection's events on a task of its own, so that tests wait for them with a
/// deadline instead of awaiting a stream that might stay silent.
final class EventLog: @unchecked Sendable {
    private let state = Mutex<(events: [MpvEvent], finished: Bool)>(([], false))
    private var task: Task<Void, Never>?

    init(_ events: AsyncStream<MpvEvent>) {
        task = Task { [self] in
            for await event in events { state.withLock { $0.events.append(event) } }
            state.withLock { $0.finished = true }
        }
    }

    /// Property changes so far, as `name=value`.
    var properties: [String] {
        state.withLock { $0.events }.compactMap { event in
            guard let name = event.propertyName else { return nil }
            let value = event.propertyValue
            return "\(name)=\(value.bool.map { "\($0)" } ?? value.double.map { "\($0)" } ?? "null")"
        }
    }

    /// Every event's name so far.
    var names: [String] { state.withLock { $0.events.map(\.name) } }

    /// Whether the stream has finished.
    var finished: Bool { state.withLock { $0.finished } }

    /// Stops collecting.
    func stop() { task?.cancel() }
}
