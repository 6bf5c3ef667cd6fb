#if canImport(Glibc)
import Glibc
#endif
import TandemNet

/// The relay's resource caps as `tandem serve` and `tandem host` take them, each with its
/// default (the `RelayCoreConfiguration` defaults, stated in the usage text).
enum RelayLimitOptions {
    /// The option names, for `Arguments`.
    static let names: Set<String> = [
        "memory-limit", "max-sessions-per-address", "max-connections-per-address", "max-unauthenticated",
        "unauthenticated-buffer", "max-output-queue", "max-attachments", "fanout-deliveries", "fanout-bytes",
        "max-unauthenticated-per-source", "hello-timeout", "proofs-per-source", "fanout-deliveries-per-source",
        "fanout-bytes-per-source", "proofs-per-second",
    ]

    /// The usage fragment.
    static let usage = "[--memory-limit SIZE (512M)] [--max-sessions-per-address N (64)] [--max-connections-per-address N (256)] "
        + "[--max-unauthenticated N (1024)] [--unauthenticated-buffer SIZE (128K)] [--max-output-queue SIZE (80M)] "
        + "[--max-attachments N (1000)] [--fanout-deliveries N/s (200000)] [--fanout-bytes SIZE/s (64M)] "
        + "[--max-unauthenticated-per-source N (32)] [--hello-timeout SECONDS (2)] [--proofs-per-source N/s (100)] [--proofs-per-second N/s (2000)] "
        + "[--fanout-deliveries-per-source N/s (400000)] [--fanout-bytes-per-source SIZE/s (128M)]"

    /// The relay configuration the options give, over the defaults.
    static func configuration(_ arguments: Arguments) throws(CLIError) -> RelayCoreConfiguration {
        var configuration = RelayCoreConfiguration()
        if let size = try size(arguments, "memory-limit") { configuration.memoryLimit = size }
        if let count = try count(arguments, "max-sessions-per-address") { configuration.maximumSessionsPerAddress = count }
        if let count = try count(arguments, "max-connections-per-address") { configuration.maximumConnectionsPerAddress = count }
        if let count = try count(arguments, "max-unauthenticated") { configuration.maximumUnauthenticatedConnections = count }
        if let size = try size(arguments, "unauthenticated-buffer") {
            // A hello with the largest activity description must still fit.
            guard size >= 80 * 1024 else { throw .usage("--unauthenticated-buffer must be at least 80K, room for the largest hello") }
            configuration.maximumUnauthenticatedBytes = size
        }
        if let size = try size(arguments, "max-output-queue") { configuration.maximumOutputBytes = size }
        if let count = try count(arguments, "max-attachments") { configuration.maximumAttachments = count }
        if let count = try count(arguments, "fanout-deliveries") { configuration.fanoutDeliveriesPerSecond = Double(count) }
        if let size = try size(arguments, "fanout-bytes") { configuration.fanoutBytesPerSecond = Double(size) }
        if let count = try count(arguments, "max-unauthenticated-per-source") { configuration.maximumUnadmittedPerSource = count }
        if let seconds = try arguments.double("hello-timeout") {
            guard (0.1...60).contains(seconds) else { throw .usage("--hello-timeout wants seconds from 0.1 to 60") }
            configuration.helloTimeout = Int64(seconds * 1e9)
        }
        if let count = try count(arguments, "proofs-per-source") {
            configuration.proofsPerSecondPerSource = Double(count)
            configuration.proofBurstPerSource = Double(2 * count)
        }
        if let count = try count(arguments, "proofs-per-second") { configuration.proofsPerSecond = Double(count) }
        if let count = try count(arguments, "fanout-deliveries-per-source") { configuration.fanoutDeliveriesPerSecondPerSource = Double(count) }
        if let size = try size(arguments, "fanout-bytes-per-source") { configuration.fanoutBytesPerSecondPerSource = Double(size) }
        return configuration
    }

    /// Keeps glibc's malloc returning large freed buffers to the system, so that the relay's
    /// resident memory follows what it holds: by default the threshold for allocating with mmap
    /// rises (up to 32 MiB) each time such a buffer is freed, after which message bodies of a few
    /// hundred KiB live in the heap and its resident size stays at its peak. `mallopt` is not in
    /// Swift's Glibc module, so it is looked up by name; without it nothing changes.
    static func keepResidentMemoryHonest() {
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        // M_MMAP_THRESHOLD (-3): fixed at 128 KiB; M_TRIM_THRESHOLD (-1): trim the heap above 1 MiB.
        _ = mallopt(-3, 128 * 1024)
        _ = mallopt(-1, 1024 * 1024)
    }

    /// A byte count with an optional K, M or G suffix (binary: 1K is 1024 bytes).
    static func parseSize(_ text: String) -> Int? {
        let trimmed = text.uppercased().hasSuffix("B") ? String(text.dropLast()) : text
        guard let last = trimmed.last else { return nil }
        let multiplier: Int
        var digits = trimmed
        switch last {
        case "K", "k": multiplier = 1 << 10
        case "M", "m": multiplier = 1 << 20
        case "G", "g": multiplier = 1 << 30
        default: multiplier = 1
        }
        if multiplier != 1 { digits.removeLast() }
        guard let number = Int(digits), number > 0 else { return nil }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: multiplier)
        return overflow ? nil : bytes
    }

    private static func size(_ arguments: Arguments, _ name: String) throws(CLIError) -> Int? {
        guard let text = arguments.value(name) else { return nil }
        guard let bytes = parseSize(text) else { throw .usage("--\(name) wants a size such as 512M, 64K or 1G, not '\(text)'") }
        return bytes
    }

    private static func count(_ arguments: Arguments, _ name: String) throws(CLIError) -> Int? {
        guard let number = try arguments.int(name) else { return nil }
        guard number > 0 else { throw .usage("--\(name) must be at least 1") }
        return number
    }
}
