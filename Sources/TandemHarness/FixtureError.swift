/// A fixture (a process, a server, a display, a clip) that could not be made or started.
public struct FixtureError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}
