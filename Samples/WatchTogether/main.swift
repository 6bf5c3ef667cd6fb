import Foundation
import SampleSupport
import Tandem
import TandemParty
import TandemPlayback

/// The clip to play: `--media PATH`, or the sample clip of this repository.
func mediaPath(_ option: String?) -> String {
    if let option { return option }
    let relative = "Samples/Media/watch-together.mp4"
    if FileManager.default.fileExists(atPath: relative) { return relative }
    // Run from elsewhere: beside this source file's folder.
    return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Media/watch-together.mp4").path
}

await SampleLaunch.run("WatchTogether", valueOptions: ["media"]) { launch in
    let media = mediaPath(launch.options["media"])
    guard FileManager.default.isReadableFile(atPath: media) else { throw SampleError("cannot read \(media)") }
    let manager = WatchSessionManager(media: media)
    // The observer runs for the life of the program, as in a SharePlay app.
    Task { await manager.observeSessions() }
    try await launch.begin(WatchTogether(item: URL(fileURLWithPath: media).lastPathComponent))

    let commands = Task {
        for await line in InputLines() {
            let (verb, rest) = InputLines.command(line)
            guard let party = manager.party else {
                print("not watching yet")
                continue
            }
            // A command typed before the player follows the group waits for it.
            await manager.untilWatching()
            do {
                switch verb {
                case "play": try party.setRate(1)
                case "pause": try party.pause()
                case "seek":
                    // The party keeps the seek within the item.
                    guard let seconds = Double(rest), seconds.isFinite, seconds >= 0 else {
                        print("usage: seek SECONDS")
                        continue
                    }
                    try party.seek(toSeconds: seconds)
                case "rate":
                    guard let rate = Double(rest), (0.25...4).contains(rate) else {
                        print("usage: rate R (0.25 to 4)")
                        continue
                    }
                    try party.setRate(rate)
                case "status": print(manager.status())
                case "quit", "leave": party.leave()
                case "end": party.end()
                default: print("unknown command '\(verb)' (play, pause, seek S, rate R, status, quit, end)")
                }
            } catch {
                print("could not \(verb): \(TerminalText.sanitized("\(error)"))")
            }
        }
        manager.party?.leave()
    }
    // This program watches one session: it is done when its party is over.
    for await _ in manager.ended { break }
    commands.cancel()
}
