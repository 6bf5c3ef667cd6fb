/// A socket address could not be understood.
public struct AddressError: Error, Hashable, CustomStringConvertible {
    /// The text that was given.
    public let text: String
    /// What was wrong with it.
    public let reason: String

    /// `'TEXT': REASON`.
    public var description: String { "'\(text)': \(reason)" }
}
