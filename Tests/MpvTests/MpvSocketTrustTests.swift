#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TandemClock
import TandemTestKit
import TandemMpv

/// The mpv IPC socket is trusted only when it is the mpv's we started, and what comes over it is
/// bounded: a fake server in this process impersonates mpv.
@Suite(.serialized, .timeLimit(.minutes(1))) struct MpvSocketTrustProcessTests {
    /// A process that is not this one nor an ancestor: what an impostor's mpv would be.
    func otherProcess() throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sleep")
        process.arguments = ["30"]
        try process.run()
        return process
    }

    @Test func anImpostorsSocketIsRefusedBeforeAnythingIsSent() async throws {
        let server = try FakeMpvServer()
        server.serve(timeout: 5) { _ in }
        let mpv = try otherProcess()
        defer {
            // SIGKILL: a test runner's blocked signals are inherited, SIGTERM may never arrive.
            kill(mpv.processIdentifier, SIGKILL)
            mpv.waitUntilExit()
        }
        let started = Date()
        await #expect {
            // Refused at once: not retried until the timeout.
            _ = try await MpvConnection.connect(path: server.path, timeout: .seconds(20), expectedPeer: mpv.processIdentifier)
        } throws: { error in
            guard let error = error as? MpvError else { return false }
            return MpvConnection.isRefusal(error) && "\(error)".contains("not by the mpv Tandem started (process \(mpv.processIdentifier))")
                && "\(error)".contains("process \(getpid())")
        }
        #expect(Date().timeIntervalSince(started) < 15, "refused only after retrying")
        #expect(server.waitUntilDone())
        // The impostor heard nothing: no command, no property name.
        #expect(server.bytesReceived.isEmpty)
    }

    @Test func theExpectedProcessAndItsDescendantsAreAccepted() async throws {
        // The fake server runs in this process, which descends from its parent.
        for expected in [getpid(), getppid()] {
            let server = try FakeMpvServer()
            server.serve { client in
                guard let line = client.readLine() else { return }
                #expect(line.contains("\"request_id\":1"))
                client.write(#"{"data":"yes","request_id":1,"error":"success"}"# + "\n")
            }
            let connection = try await MpvConnection.connect(path: server.path, timeout: .seconds(5), expectedPeer: expected)
            defer { connection.close() }
            #expect(try await connection.get("whatever") == .string("yes"))
            connection.close()
            #expect(server.waitUntilDone())
        }
        #expect(MpvConnection.isProcess(getpid(), descendantOf: getpid()))
        #expect(MpvConnection.isProcess(getpid(), descendantOf: 1))
        #expect(!MpvConnection.isProcess(getppid(), descendantOf: getpid()))
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to give the socket file to another user"))
    func aSocketFileOfAnotherUserIsRefused() async throws {
        let server = try FakeMpvServer()
        server.serve(timeout: 5) { _ in }
        #expect(chown(server.path, 65534, 65534) == 0)
        #expect {
            _ = try MpvConnection(path: server.path, expectedPeer: getpid())
        } throws: { error in
            "\(error)".contains("the socket file belongs to user 65534")
        }
        #expect(server.waitUntilDone())
        #expect(server.bytesReceived.isEmpty)
    }

    @Test func aLineLongerThanTheLimitEndsTheConnectionWithAnError() async throws {
        let server = try FakeMpvServer()
        server.serve { client in
            guard client.readLine() != nil else { return }
            // A reply that never ends: more than the limit, and no newline.
            let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 64 * 1024)
            for _ in 0..<(MpvConnection.maximumLineLength / chunk.count + 2) { client.write(chunk) }
        }
        let connection = try MpvConnection(path: server.path, replyTimeout: .seconds(20))
        defer { connection.close() }
        await #expect {
            _ = try await connection.get("time-pos")
        } throws: { error in
            "\(error)".contains("a line of more than \(MpvConnection.maximumLineLength) bytes")
        }
        #expect(connection.isClosed)
        connection.close()
        #expect(server.waitUntilDone())
    }

    @Test func repliesWithIdsThatAreNotOursAreIgnored() async throws {
        let server = try FakeMpvServer()
        server.serve { client in
            guard client.readLine() != nil else { return }
            for id in ["1e300", "-1e300", "-1", "0", "2.5", "9.3e18", "-9.3e18", "\"1\"", "null", "[1]", "{\"a\":1}", "1.7976931348623157e308"] {
                client.write(#"{"data":"forged","request_id":"# + id + #","error":"success"}"# + "\n")
            }
            client.write(#"{"data":42,"request_id":1,"error":"success"}"# + "\n")
        }
        let connection = try MpvConnection(path: server.path)
        defer { connection.close() }
        #expect(try await connection.get("answer") == .number(42))
        #expect(!connection.isClosed)
        connection.close()
        #expect(server.waitUntilDone())
    }

    @Test func exactIntegersNeverTrap() {
        #expect(MpvValue.number(7).exactInteger == 7)
        #expect(MpvValue.number(-3).exactInteger == -3)
        #expect(MpvValue.number(2.5).exactInteger == nil)
        #expect(MpvValue.number(1e300).exactInteger == nil)
        #expect(MpvValue.number(-.greatestFiniteMagnitude).exactInteger == nil)
        #expect(MpvValue.number(.infinity).exactInteger == nil)
        #expect(MpvValue.string("1").exactInteger == nil)
    }

    @Test func aSeekLandingAtAnExtremeIsAPersonsAndNeverTraps() {
        for (asked, landed) in [(Int64.max, Int64.min), (.min, .max), (0, .min), (-1, .max)] {
            var ledger = MpvRequestLedger(paused: true, speed: 1)
            ledger.requestSeek(to: ItemTime(nanoseconds: asked), at: .zero)
            #expect(ledger.observe(.seekLanded(at: landed), at: HostInstant(nanoseconds: 1)) == .seek(to: landed))
        }
        var ledger = MpvRequestLedger(paused: true, speed: 1)
        ledger.requestSeek(to: .distantFuture, at: .zero)
        #expect(ledger.observe(.seekLanded(at: .max), at: HostInstant(nanoseconds: 1)) == nil)
    }

    @Test func mpvNeverInheritsTheInvite() async throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        // A stand-in for mpv that prints its environment into mpv's log.
        let script = fixtures.path("print-environment")
        try Data("#!/bin/sh\nenv\n".utf8).write(to: URL(fileURLWithPath: script))
        #expect(chmod(script, 0o700) == 0)
        setenv("TANDEM_INVITE", "tandem://127.0.0.1:1/400da221-e2ff-443f-a3c6-5de1c6b01483?k=SECRET", 1)
        setenv("TANDEM_TEST_MARKER", "present", 1)
        defer {
            unsetenv("TANDEM_INVITE")
            unsetenv("TANDEM_TEST_MARKER")
        }
        let process = try MpvProcess(file: SampleClip.h264.path, executable: script)
        #expect(await process.waitForExit(timeout: .seconds(10)))
        let log = try String(contentsOfFile: process.logPath, encoding: .utf8)
        #expect(log.contains("TANDEM_TEST_MARKER=present"), "\(log)")
        #expect(!log.contains("TANDEM_INVITE"))
        #expect(!log.contains("SECRET"))
        await process.terminate()
    }
}

/// mpv given a received playlist fetches nothing it names.
@Suite(.serialized, .timeLimit(.minutes(1))) struct MpvReceivedMediaProcessTests {
    @Test func aPlaylistNamingTheNetworkMakesMpvConnectNowhere() async throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let witness = try LoopbackConnectionWitness()
        let playlist = try fixtures.write("movie.m3u8", Array("""
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:10
            #EXTINF:10.0,
            http://127.0.0.1:\(witness.port)/segment0.ts
            #EXT-X-ENDLIST

            """.utf8))
        let process = try MpvProcess(file: playlist, extraArguments: ["--vo=null", "--ao=null"])
        #expect(process.commandLine.contains("--access-references=no") && process.commandLine.contains("--ytdl=no"))
        // With --idle=no, mpv exits once it has nothing it may play.
        #expect(await process.waitForExit(timeout: .seconds(20)), "\(process.logTail())")
        #expect(!witness.connectionAttempted, "\(process.logTail())")
        await process.terminate()
        // A URL the user gives is mpv's to open as it likes.
        #expect(!(try MpvProcess(file: "http://127.0.0.1:1/x", executable: "/bin/true").commandLine.contains("--ytdl=no")))
    }
}

/// What a crafted file makes mpv report never traps a conversion to nanoseconds.
@Suite struct MpvReportedTimeTests {
    @Test(arguments: [(1.5, 1.5), (-2.0, -2.0), (1e8, 1e8), (1e8 + 1, nil), (9.3e9, nil), (-1e300, nil), (Double.infinity, nil)])
    func secondsAreMediaTimesOrNothing(reported: Double, seconds: Double?) {
        #expect(MpvValue.number(reported).seconds == seconds)
        if let seconds { #expect(Int64((seconds * 1e9).rounded()) != 0 || seconds == 0) }
    }
}
