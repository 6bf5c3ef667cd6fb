import Foundation
import TandemMedia

/// `tandem probe FILE [--json]`: what a media file holds.
enum ProbeCommand: Command {
    static let words = ["probe"]
    static let usage = "probe FILE [--json]"
    static let summary = "show a media file's container, streams, codecs, sizes, frame rate and duration"

    static func run(_ arguments: [String]) async throws -> Int32 {
        let arguments = try Arguments(arguments, flags: ["json"])
        try arguments.expectPositionals(atMost: 1)
        let path = try arguments.positional(0, "FILE")
        let info: MediaInfo
        do {
            info = try MediaFile(url: path).info
        } catch {
            throw CLIError.failure(error.description)
        }
        if arguments.flags.contains("json") {
            try printJSON(info)
        } else {
            print(describe(info))
        }
        return 0
    }

    static func describe(_ info: MediaInfo) -> String {
        var header = "\(info.url): \(info.containerLongName) (\(info.container))"
        if let duration = info.duration { header += String(format: ", %.3f s", duration) }
        if let bitRate = info.bitRate { header += ", \(bitRate / 1000) kb/s" }
        var lines = [header]
        for stream in info.streams {
            var parts = ["\(stream.codec) (\(stream.codecLongName))"]
            switch stream.kind {
            case .video:
                if let width = stream.width, let height = stream.height { parts.append("\(width)x\(height)") }
                if let format = stream.pixelFormat { parts.append(format) }
                if let rate = stream.frameRate { parts.append(String(format: "%.3f fps", rate)) }
            case .audio:
                if let rate = stream.sampleRate { parts.append("\(rate) Hz") }
                if let channels = stream.channels { parts.append("\(channels) channels") }
                if let format = stream.sampleFormat { parts.append(format) }
            default:
                break
            }
            if let frames = stream.frameCount { parts.append("\(frames) frames") }
            if let duration = stream.duration { parts.append(String(format: "%.3f s", duration)) }
            parts.append("time base \(stream.timeBase)")
            lines.append("  #\(stream.index) \(stream.kind.rawValue): " + parts.joined(separator: ", "))
        }
        return lines.joined(separator: "\n")
    }
}
