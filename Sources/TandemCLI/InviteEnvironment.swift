#if canImport(Glibc)
import Glibc
#endif

/// `TANDEM_INVITE`, the environment variable that `tandem join` may take its invite from.
///
/// Read once as `tandem` starts, and removed from the process's environment at that moment, so
/// that no child it starts (mpv, the processes of a benchmark) inherits the session's secret.
enum InviteEnvironment {
    /// The variable's name.
    static let name = "TANDEM_INVITE"

    /// Its value as `tandem` started (nil when unset). The first use reads and removes it:
    /// `main.swift` makes that use before any command runs or any thread starts.
    static let inherited: String? = {
        let value = getenv(name).map { String(cString: $0) }
        unsetenv(name)
        return value
    }()
}
