import Foundation

/// Standard input, a line at a time, as an async sequence: commands typed at a terminal or
/// written by a test through a pipe. Blank lines are skipped; the sequence ends at end of file.
public struct InputLines: AsyncSequence, Sendable {
    /// A line, without its newline and surrounding spaces.
    public typealias Element = String

    private let stream: AsyncStream<String>

    /// Starts reading standard input on a thread of its own (reading blocks).
    public init() {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        self.stream = stream
        Thread.detachNewThread {
            while let line = readLine() {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if !trimmed.isEmpty { continuation.yield(trimmed) }
            }
            continuation.finish()
        }
    }

    /// Iterates the lines.
    public func makeAsyncIterator() -> AsyncStream<String>.Iterator { stream.makeAsyncIterator() }

    /// Splits `line` into its first word and the rest: `("ring", "dinner is ready")`.
    public static func command(_ line: String) -> (verb: String, rest: String) {
        let parts = line.split(separator: " ", maxSplits: 1)
        let verb = parts.first.map(String.init) ?? ""
        let rest = parts.count > 1 ? String(parts[1]).trimmingCharacters(in: .whitespaces) : ""
        return (verb, rest)
    }
}
