/// What a player is given to open, told apart without FFmpeg: a URL or a path.
public enum MediaLocation {
    /// Whether `url` is a URL the user gave (`scheme://…`), as opposed to a path.
    public static func isURL(_ url: String) -> Bool {
        guard let separator = url.range(of: "://") else { return false }
        let scheme = url[..<separator.lowerBound]
        guard let first = scheme.first, first.isASCII, first.isLetter else { return false }
        return scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
    }
}
