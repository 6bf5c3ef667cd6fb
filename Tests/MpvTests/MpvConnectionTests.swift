import Foundation
import Testing
import TandemMedia
import TandemTestKit

/// mpv's JSON IPC, on a real headless mpv: commands, replies, observed properties, errors.
@Suite(.serialized) struct MpvConnectionTests {
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
            let events = mpv.events
            try await mpv.observe("pause")
            try await mpv.observe("speed")
            try await mpv.observe("seeking")
            #expect(await eventually { (try? await mpv.get("time-pos"))?.double != nil })
            #expect(try await mpv.get("pause") == .bool(true))

            try await mpv.set("speed", 1.5)
            try await mpv.set("pause", false)
            #expect(try await mpv.get("speed").double == 1.5)
            let reply = try await mpv.command(["seek", 10, "absolute", "exact"])
            #expect(reply.sentAt <= reply.receivedAt)
            try await mpv.set("pause", true)
            #expect(await eventually { (try? await mpv.get("seeking"))?.bool == false })
            let position = try #require(try await mpv.get("time-pos").double)
            #expect(position >= 10 && position < 10.5, "landed at \(position)")

            // Every change was announced, in order: resumed, faster, paused again.
            var seen: [String] = []
            var iterator = events.makeAsyncIterator()
            func complete() -> Bool {
                guard let resumed = seen.firstIndex(of: "pause=false"), seen.contains("speed=1.5") else { return false }
                return seen[resumed...].contains("pause=true")
            }
            for _ in 0..<200 where !complete() {
                guard let event = await iterator.next() else { break }
                guard let name = event.propertyName, name != "seeking" else { continue }
                seen.append("\(name)=\(event.propertyValue.bool.map { "\($0)" } ?? event.propertyValue.double.map { "\($0)" } ?? "null")")
            }
            #expect(complete(), "\(seen)")
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
            try await first.observe("pause")
            let events = first.events
            try await second.set("pause", false)
            var iterator = events.makeAsyncIterator()
            var unpaused = false
            for _ in 0..<20 {
                guard let event = await iterator.next() else { break }
                if event.propertyName == "pause", event.propertyValue == .bool(false) {
                    unpaused = true
                    break
                }
            }
            #expect(unpaused)
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
            var iterator = events.makeAsyncIterator()
            #expect(await iterator.next() == nil)
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
