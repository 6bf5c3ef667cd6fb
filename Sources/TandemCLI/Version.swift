import TandemWire

/// What `tandem --version` prints.
enum Version {
    /// Tandem's release.
    static let release = "0.9.0"

    /// The release and the relay protocol's version (a relay and its participants must agree on
    /// the latter).
    static var line: String { "tandem \(release) (relay protocol \(RelayFrame.version))" }
}
