import Foundation
import Testing
@testable import TandemCLI
@testable import TandemMpv

/// One key table for the terminal and mpv's window: the keys Tandem binds in mpv mean at the
/// terminal what they mean there, and every key the terminal reads is in the table `?` prints and
/// in the README's.
@Suite struct KeyTableTests {
    /// The bytes a terminal sends for a key as mpv names it.
    static func terminalBytes(_ mpvKey: String) -> [UInt8]? {
        switch mpvKey {
        case "SPACE": [0x20]
        case "BS": [0x7F]
        case "LEFT": Array("\u{1B}[D".utf8)
        case "RIGHT": Array("\u{1B}[C".utf8)
        case "Shift+LEFT": Array("\u{1B}[1;2D".utf8)
        case "Shift+RIGHT": Array("\u{1B}[1;2C".utf8)
        // Enter opens the chat line at the terminal; in mpv's window it is the next item.
        case "ENTER": nil
        default: mpvKey.count == 1 ? Array(mpvKey.utf8) : nil
        }
    }

    /// The terminal's key for a group key's meaning.
    static func watchKey(_ action: MpvPlayer.GroupKey) -> WatchKey {
        switch action {
        case .next: .next
        case .previous: .previous
        case .slower: .slower
        case .faster: .faster
        case .resetRate: .resetRate
        case .togglePause: .space
        case .seekBack: .left
        case .seekForward: .right
        case .seekBackFar: .shiftLeft
        case .seekForwardFar: .shiftRight
        }
    }

    static func parse(_ bytes: [UInt8]) -> [WatchKey] {
        var parser = KeyParser()
        return bytes.compactMap { parser.feed($0) }
    }

    @Test func mpvWindowKeysMeanAtTheTerminalWhatTheyMeanInMpv() throws {
        var checked = 0
        for (key, action) in MpvPlayer.groupKeys {
            guard let bytes = Self.terminalBytes(key) else {
                #expect(key == "ENTER", "mpv key \(key) has no terminal form")
                continue
            }
            #expect(Self.parse(bytes) == [Self.watchKey(action)], "mpv's \(key)")
            checked += 1
        }
        #expect(checked == MpvPlayer.groupKeys.count - 1)
        // Every meaning mpv's window offers is reachable there.
        let bound = Set(MpvPlayer.groupKeys.map(\.action.rawValue))
        #expect(bound == Set(MpvPlayer.GroupKey.allCases.map(\.rawValue)))
    }

    /// Every printable key the terminal reads, with the key it gives.
    static let printableKeys: [(Character, WatchKey)] = (0x21...0x7E).compactMap { byte in
        var parser = KeyParser()
        guard let key = parser.feed(UInt8(byte)) else { return nil }
        return (Character(Unicode.Scalar(UInt8(byte))), key)
    }

    @Test func everyKeyTheTerminalReadsIsInTheTableAndTheReadme() throws {
        let keys = Self.printableKeys.map(\.0)
        // The terminal's own keys, as the README and `?` name them (space and the arrows aside).
        #expect(Set(keys) == Set("p[]9mqe><?hi0-="))
        let table = KeyTable.lines.joined(separator: "\n")
        let readme = try String(contentsOf: URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("README.md"), encoding: .utf8)
        let readmeKeys = readme.components(separatedBy: "## Keys and commands").dropFirst().first?
            .components(separatedBy: "\n## ").first ?? ""
        for key in keys {
            // A key is named standing alone: between spaces, backticks or the line's edges.
            #expect(Self.names(key, in: table), "`?` does not list \(key)")
            #expect(Self.names(key, in: readmeKeys), "the README's key table does not list \(key)")
        }
        for (name, text) in [("space", table), ("Backspace", table), ("Enter", table), ("←", table),
                                 ("space", readmeKeys), ("Backspace", readmeKeys), ("Enter", readmeKeys), ("←", readmeKeys)] {
            #expect(text.contains(name), "\(name) is missing")
        }
    }

    @Test func theHintNamesOnlyKeysTheTerminalReads() {
        let known = Set(Self.printableKeys.map(\.0))
        let words = KeyTable.hint.dropFirst("keys:".count).split(separator: " ")
        for word in words where word.count == 1 {
            #expect(known.contains(word.first!), "the hint names \(word), which does nothing")
        }
        #expect(KeyTable.hint.count <= 80)
    }

    /// Whether `key` appears in `text` as a key of its own.
    static func names(_ key: Character, in text: String) -> Bool {
        let separators: Set<Character> = [" ", "`", "\n", "|", ":", "(", ")", ","]
        let characters = Array(text)
        for index in characters.indices where characters[index] == key {
            let before = index == 0 ? " " : characters[index - 1]
            let after = index + 1 == characters.count ? " " : characters[index + 1]
            if separators.contains(before) && separators.contains(after) { return true }
        }
        return false
    }
}
