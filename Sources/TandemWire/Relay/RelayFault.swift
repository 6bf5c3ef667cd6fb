/// A refusal, an error or a failed request: a code and a line of text for people.
public struct RelayFault: Sendable, Hashable, Error, CustomStringConvertible {
    /// What kind of fault.
    public var code: RelayFaultCode
    /// The detail, at most `RelayWireLimits.maximumTextLength` bytes on the wire.
    public var text: String

    /// A fault of `code` with `text`.
    public init(_ code: RelayFaultCode, _ text: String) {
        self.code = code
        self.text = text
    }

    /// `code N: text`.
    public var description: String { "fault \(code.rawValue): \(text)" }
}
