#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TandemNATS
import TandemNet

/// Where `tandem serve --cluster` takes NATS's credentials from, so that they need not be on the
/// command line, which `ps` shows to every local user.
///
/// `--cluster-credentials FILE` names a file holding one line: `USER:PASS` (split at the first
/// colon) or a token (a line without a colon). Blank lines and lines starting with `#` are
/// skipped; the line is taken as it is, not percent-decoded. Failing that,
/// `TANDEM_NATS_CREDENTIALS` holds the same text. Credentials in the URL itself still work, with a
/// warning; they may not be given together with a file.
enum NATSCredentialsSource {
    /// The environment variable's name.
    static let environmentName = "TANDEM_NATS_CREDENTIALS"

    /// The variable's value as `tandem` started (nil when unset). The first use reads and removes
    /// it: `main.swift` makes that use before any command runs or any thread starts, so that no
    /// child `tandem` starts inherits it. Its bytes in the process's environment block are
    /// zeroed too, so that `/proc/PID/environ` no longer shows them.
    static let inherited: String? = {
        guard let pointer = getenv(environmentName) else { return nil }
        let value = String(cString: pointer)
        memset(pointer, 0, strlen(pointer))
        unsetenv(environmentName)
        return value
    }()

    /// The largest credentials file read (a line of credentials is far shorter).
    static let maximumFileBytes = 64 * 1024

    /// `url` with the credentials `file` (read from disk) or else `environment` holds, refused
    /// with one line when both the URL and the file carry them. `warn` is told when the URL on
    /// the command line carries a password or token, and when the file is readable by others.
    static func resolve(_ url: NATSURL, file: String?, environment: String?, warn: (String) -> Void) throws(CLIError) -> NATSURL {
        var resolved = url
        if url.credentials != .none {
            if file != nil { throw .usage("--cluster-credentials and credentials in --cluster's URL: give them once, in the file") }
            warn("serve: the --cluster URL carries a secret, which `ps` shows to every local user; "
                + "use --cluster-credentials FILE or \(environmentName) instead")
            return url
        }
        if let file {
            resolved.credentials = try parse(try read(file, warn: warn), origin: "--cluster-credentials \(file)")
        } else if let environment {
            resolved.credentials = try parse(environment, origin: environmentName)
        }
        return resolved
    }

    /// The credentials in `text` (`USER:PASS` or a token on its first line that is neither blank
    /// nor a comment); the error names `origin`, never what the text holds.
    static func parse(_ text: String, origin: String) throws(CLIError) -> NATSURL.Credentials {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let line = lines.first(where: { !$0.isEmpty && !$0.hasPrefix("#") }) else {
            throw .usage("\(origin) holds no credentials; it wants one line, USER:PASS or a token")
        }
        guard let colon = line.firstIndex(of: ":") else { return .token(line) }
        let user = String(line[..<colon])
        guard !user.isEmpty else { throw .usage("\(origin) gives an empty user; it wants USER:PASS or a token") }
        return .userPassword(user: user, password: String(line[line.index(after: colon)...]))
    }

    /// The text of the credentials file at `path`, warning when others may read it.
    private static func read(_ path: String, warn: (String) -> Void) throws(CLIError) -> String {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw .usage("--cluster-credentials cannot read \(path): \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .usage("--cluster-credentials wants a file, and \(path) is not one") }
        guard Int(status.st_size) <= maximumFileBytes else {
            throw .usage("--cluster-credentials wants a file of one line, and \(path) holds \(status.st_size) bytes")
        }
        if status.st_mode & 0o077 != 0 {
            warn("serve: \(path) can be read by other users; chmod 600 it")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .usage("--cluster-credentials cannot read \(path)")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
