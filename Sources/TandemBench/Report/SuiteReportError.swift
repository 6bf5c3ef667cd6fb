/// Why the suite's report could not be written. Carries the file or directory and the reason.
public struct SuiteReportError: Error, Hashable, CustomStringConvertible {
    private enum Code: Hashable {
        case cannotCreateDirectory
        case cannotEncode
        case cannotWrite
    }

    private let code: Code
    /// The file or directory concerned.
    public let path: String
    /// What the system said.
    public let reason: String

    private init(_ code: Code, path: String, reason: String) {
        self.code = code
        self.path = path
        self.reason = reason
    }

    /// The output directory could not be created.
    public static func cannotCreateDirectory(_ path: String, reason: String) -> SuiteReportError {
        SuiteReportError(.cannotCreateDirectory, path: path, reason: reason)
    }

    /// The report could not be encoded as JSON.
    public static func cannotEncode(_ path: String, reason: String) -> SuiteReportError {
        SuiteReportError(.cannotEncode, path: path, reason: reason)
    }

    /// A file could not be written.
    public static func cannotWrite(_ path: String, reason: String) -> SuiteReportError {
        SuiteReportError(.cannotWrite, path: path, reason: reason)
    }

    /// One line saying what failed.
    public var description: String {
        switch code {
        case .cannotCreateDirectory: "cannot create the report directory \(path): \(reason)"
        case .cannotEncode: "cannot encode the report as JSON for \(path): \(reason)"
        case .cannotWrite: "cannot write \(path): \(reason)"
        }
    }
}
