import Foundation

/// The media a command line names, as `tandem host MEDIA…` and `tandem join [INVITE] MEDIA…`
/// take them: files, folders (their media files, not recursively, in natural order: `ep2`
/// before `ep10`) and `.m3u`/`.m3u8` lists (`#` lines skipped, relative paths against the
/// list's folder), in the order given.
///
/// Nothing is opened but folders and lists: what cannot be listed (a folder without media, a
/// list entry that is missing, a folder, or a URL) is a problem of one line each, and the rest
/// is listed. A word that names no file (or is a URL) is listed as it is, for whoever opens it
/// to say what is wrong with it in one line.
public enum MediaList {
    /// The file name extensions of media, lowercased: what a folder contributes.
    public static let mediaExtensions: Set<String> = [
        "3gp", "aac", "avi", "flac", "flv", "m2ts", "m4a", "m4v", "mka", "mkv", "mov", "mp3", "mp4", "mpeg", "mpg",
        "mts", "ogg", "ogv", "opus", "ts", "wav", "webm", "wmv",
    ]

    /// The extensions of playlists, lowercased.
    public static let playlistExtensions: Set<String> = ["m3u", "m3u8"]

    /// The largest playlist read (bytes): a list of a few hundred paths is a few KiB.
    public static let maximumPlaylistBytes = 1024 * 1024

    /// What `expand(_:)` found: the media in order, and one line for each thing it could not list.
    public struct Expansion: Sendable, Equatable {
        /// The media files, in order.
        public var media: [String] = []
        /// One line each: what was skipped and why.
        public var problems: [String] = []

        /// `media`, having skipped what `problems` say.
        public init(media: [String] = [], problems: [String] = []) {
            self.media = media
            self.problems = problems
        }
    }

    /// The media that `words` name, in order (see the type).
    public static func expand(_ words: [String]) -> Expansion {
        var expansion = Expansion()
        for word in words {
            var isFolder: ObjCBool = false
            if isURL(word) || !FileManager.default.fileExists(atPath: word, isDirectory: &isFolder) {
                // Named on the command line: opening it says what is wrong (a missing file
                // fails the command before anything starts), or plays it (a URL).
                expansion.media.append(word)
            } else if isFolder.boolValue {
                let media = folder(word)
                if media.isEmpty { expansion.problems.append("\(word): a folder with no media files") }
                expansion.media += media
            } else if playlistExtensions.contains(fileExtension(word)) {
                playlist(word, into: &expansion)
            } else {
                expansion.media.append(word)
            }
        }
        return expansion
    }

    /// The media files of the folder at `path` (not of its subfolders; hidden files skipped),
    /// in natural order.
    public static func folder(_ path: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.filter { name in
            guard !name.hasPrefix("."), mediaExtensions.contains(fileExtension(name)) else { return false }
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: (path as NSString).appendingPathComponent(name), isDirectory: &isFolder)
                && !isFolder.boolValue
        }
        .sorted(by: naturallyPrecedes)
        .map { (path as NSString).appendingPathComponent($0) }
    }

    /// Adds the entries of the playlist at `path` to `expansion`.
    static func playlist(_ path: String, into expansion: inout Expansion) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            expansion.problems.append("\(path): cannot be read")
            return
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: maximumPlaylistBytes + 1)) ?? Data()
        guard data.count <= maximumPlaylistBytes else {
            expansion.problems.append("\(path): a list over \(maximumPlaylistBytes) bytes")
            return
        }
        let folder = (path as NSString).deletingLastPathComponent
        var text = String(decoding: data, as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        // "\r\n" is one Character, and one line end, as "\n" is.
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let place = "\(path):\(index + 1)"
            var entry = line
            if let url = URL(string: line), url.isFileURL { entry = url.path }
            if isURL(entry) {
                expansion.problems.append("\(place): \(line) is a URL; lists name files here")
                continue
            }
            if !entry.hasPrefix("/") { entry = (folder as NSString).appendingPathComponent(entry) }
            var isFolder: ObjCBool = false
            if !FileManager.default.fileExists(atPath: entry, isDirectory: &isFolder) {
                expansion.problems.append("\(place): \(line): no such file")
            } else if isFolder.boolValue {
                expansion.problems.append("\(place): \(line) is a folder; lists name files")
            } else {
                expansion.media.append(entry)
            }
        }
    }

    /// Whether `text` is a URL (`scheme://…`) rather than a path.
    static func isURL(_ text: String) -> Bool {
        guard let separator = text.range(of: "://") else { return false }
        let scheme = text[..<separator.lowerBound]
        return !scheme.isEmpty && scheme.allSatisfy { $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }
    }

    static func fileExtension(_ path: String) -> String { (path as NSString).pathExtension.lowercased() }

    /// Natural order: runs of digits compare as numbers (`ep2` before `ep10`, `ep02` beside
    /// `ep2`), the rest case-insensitively; equal so far, the shorter first, then byte order, so
    /// that the order is total.
    public static func naturallyPrecedes(_ lhs: String, _ rhs: String) -> Bool {
        let left = chunks(lhs), right = chunks(rhs)
        for (a, b) in zip(left, right) where a != b {
            switch (a, b) {
            case let (.number(x), .number(y)):
                let x = x.drop { $0 == "0" }, y = y.drop { $0 == "0" }
                if x.count != y.count { return x.count < y.count }
                if x != y { return x < y }
            case let (.text(x), .text(y)):
                let (x, y) = (x.lowercased(), y.lowercased())
                if x != y { return x < y }
            case (.number, .text):
                return true
            case (.text, .number):
                return false
            }
        }
        if left.count != right.count { return left.count < right.count }
        return Array(lhs.utf8).lexicographicallyPrecedes(Array(rhs.utf8))
    }

    private enum Chunk: Equatable {
        case number(Substring)
        case text(Substring)
    }

    private static func chunks(_ text: String) -> [Chunk] {
        var chunks: [Chunk] = []
        var start = text.startIndex
        while start < text.endIndex {
            let digits = text[start].isASCII && text[start].isNumber
            var end = start
            while end < text.endIndex, (text[end].isASCII && text[end].isNumber) == digits { end = text.index(after: end) }
            chunks.append(digits ? .number(text[start..<end]) : .text(text[start..<end]))
            start = end
        }
        return chunks
    }
}
