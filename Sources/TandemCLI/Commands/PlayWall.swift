import Foundation
import TandemBench
import TandemClock
import TandemMedia
import TandemMediaTypes
import TandemPlayback

/// `tandem play A.mp4 B.mp4 ... --wall`: a wall of screens. Each file plays in a built-in player
/// of its own, drawn in its tile of the terminal (`TerminalWall`), and the players are coordinated
/// by one `PlaybackCoordinationMedium` in this process, with no session: they start, play and end
/// together on one timeline. Video only (several sounds at once would clash).
enum PlayWall {
    /// The one item identifier every screen's file plays under, so that one timeline drives
    /// them all (multi-view: the same programme from several angles).
    static let item = "wall"

    static func run(_ arguments: Arguments) async throws -> Int32 {
        let paths = arguments.positionals
        guard !paths.isEmpty else { throw CLIError.usage("--wall wants one file for each screen, at most 9") }
        guard paths.count <= 9 else { throw CLIError.usage("--wall takes at most 9 files, not \(paths.count)") }
        for option in ["presentation-log", "snapshot"] where arguments.values[option] != nil {
            throw CLIError.usage("--\(option) plays one file; it cannot be used with --wall")
        }
        let (start, rate, duration, threads, video) = try PlayCommand.playing(arguments)

        let wall = video == "terminal" ? TerminalWall(tiles: paths.count) : nil
        var players: [HeadlessPlayer] = []
        defer {
            for player in players { player.close() }
            wall?.stop()
        }
        var options = HeadlessPlayer.Options()
        options.threads = threads
        options.decodeAudio = false
        for (index, path) in paths.enumerated() {
            do {
                let sinks: [any VideoSink] = wall.map { [$0.tile(index)] } ?? []
                players.append(try HeadlessPlayer(item: PlaybackItem(file: path, identifier: item), options: options, videoSinks: sinks))
            } catch {
                throw CLIError.failure("\(path): \(error)")
            }
        }
        let medium = PlaybackCoordinationMedium()
        for player in players { try player.playbackCoordinator.coordinate(using: medium) }
        let leader = players[0].playbackCoordinator
        do {
            try leader.transitionToItem(identifier: item, at: ItemTime(nanoseconds: MediaTime.nanoseconds(seconds: start)))
            try await until(10, "the screens take the item") { players.allSatisfy { $0.playbackCoordinator.timeline.item == item } }
            try leader.proposeRateChange(to: rate)
            try await until(10, "the screens play") { players.allSatisfy { $0.playbackCoordinator.timeline.rate > 0 } }
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError.failure("\(error)")
        }
        let deadline = duration.map { HostInstant.now() + .seconds($0) }
        // Until the duration, or until the group pauses at the end of the item.
        while deadline.map({ HostInstant.now() < $0 }) ?? true {
            let now = SessionInstant(nanoseconds: HostInstant.now().nanoseconds)
            let group = leader.core(at: now)
            if group.timeline.rate == 0 { break }
            if let wall {
                let position = group.timeline.mediaTime(atSessionTime: now).nanoseconds
                wall.statusLine = String(format: "wall of %d  %.2f s  rate %.2f  frames %d", players.count, MediaTime.seconds(position), rate,
                                         players.map(\.statistics.presentedFrames).reduce(0, +))
            }
            try await Task.sleep(for: .milliseconds(250))
        }
        wall?.stop()
        print("played a wall of \(players.count) on one coordination medium")
        var failed = false
        for (path, player) in zip(paths, players) {
            let statistics = player.statistics
            print("  \(path): \(statistics.presentedFrames) frames presented, \(statistics.droppedLateFrames) dropped late")
            if let error = statistics.decodingError {
                print("  \(path): decoding stopped early: \(error)")
                failed = true
            }
        }
        return failed ? 2 : 0
    }

    /// Waits, checking every 10 ms, until `condition` holds, or fails after `seconds` saying `what`.
    private static func until(_ seconds: Double, _ what: String, _ condition: () -> Bool) async throws {
        let deadline = HostInstant.now() + .seconds(seconds)
        while !condition() {
            guard HostInstant.now() < deadline else { throw CLIError.failure("timed out: \(what)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
