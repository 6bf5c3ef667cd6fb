/// A uniform type identifier: as much of UniformTypeIdentifiers' `UTType` as transfer
/// representations need (Linux has no such framework). Identifiers are Apple's, so that a
/// conformance written for Apple's SDK names the same types here.
///
/// Conformance is a small built-in tree: every type conforms to itself and to `.item`; data types
/// to `.data`; text to `.text`, plain text to `.plainText`; images to `.image`; movies to
/// `.movie`. Declared types (`exportedAs:`, `importedAs:`) conform to `.data` and to any
/// `conformingTo` they name.
public struct UTType: Hashable, Sendable, CustomStringConvertible {
    /// The reverse-DNS identifier, as `public.png`.
    public let identifier: String
    /// The types this one directly conforms to.
    private let parents: [String]
    /// The file name extension files of this type usually have.
    public let preferredFilenameExtension: String?

    private init(_ identifier: String, parents: [String], filenameExtension: String? = nil) {
        self.identifier = identifier
        self.parents = parents
        self.preferredFilenameExtension = filenameExtension
    }

    /// The built-in type named `identifier`, or a data type of that name when it is not built in.
    /// Nil only for an empty identifier.
    public init?(_ identifier: String) {
        guard !identifier.isEmpty else { return nil }
        self = UTType.builtIn[identifier] ?? UTType(identifier, parents: [UTType.data.identifier])
    }

    /// A type this program declares (Apple: exported in its Info.plist), conforming to `.data`
    /// and to `conformingTo`.
    public init(exportedAs identifier: String, conformingTo parentType: UTType? = nil) {
        self.init(identifier, parents: [parentType?.identifier ?? UTType.data.identifier])
    }

    /// A type another program declares (Apple: imported in its Info.plist).
    public init(importedAs identifier: String, conformingTo parentType: UTType? = nil) {
        self.init(exportedAs: identifier, conformingTo: parentType)
    }

    /// Whether this type is `type` or conforms to it through the built-in tree.
    public func conforms(to type: UTType) -> Bool {
        if identifier == type.identifier || type.identifier == UTType.item.identifier { return true }
        var pending = parents
        var seen: Set<String> = []
        while let next = pending.popLast() {
            if next == type.identifier { return true }
            guard seen.insert(next).inserted else { continue }
            pending += UTType.builtIn[next]?.parents ?? []
        }
        return false
    }

    /// Only the identifier decides.
    public static func == (lhs: UTType, rhs: UTType) -> Bool { lhs.identifier == rhs.identifier }
    /// Hashes the identifier.
    public func hash(into hasher: inout Hasher) { hasher.combine(identifier) }
    /// The identifier.
    public var description: String { identifier }

    /// Anything.
    public static let item = UTType("public.item", parents: [])
    /// Any bytes.
    public static let data = UTType("public.data", parents: ["public.item"])
    /// Content people read, watch or hear.
    public static let content = UTType("public.content", parents: ["public.data"])
    /// Text of any encoding.
    public static let text = UTType("public.text", parents: ["public.content"])
    /// Text without markup.
    public static let plainText = UTType("public.plain-text", parents: ["public.text"], filenameExtension: "txt")
    /// Plain text in UTF-8.
    public static let utf8PlainText = UTType("public.utf8-plain-text", parents: ["public.plain-text"], filenameExtension: "txt")
    /// JSON.
    public static let json = UTType("public.json", parents: ["public.text"], filenameExtension: "json")
    /// A URL.
    public static let url = UTType("public.url", parents: ["public.data"])
    /// A URL naming a file.
    public static let fileURL = UTType("public.file-url", parents: ["public.url"])
    /// A picture of any format.
    public static let image = UTType("public.image", parents: ["public.content"])
    /// A PNG picture.
    public static let png = UTType("public.png", parents: ["public.image"], filenameExtension: "png")
    /// A JPEG picture.
    public static let jpeg = UTType("public.jpeg", parents: ["public.image"], filenameExtension: "jpeg")
    /// Audio and video.
    public static let audiovisualContent = UTType("public.audiovisual-content", parents: ["public.content"])
    /// A film.
    public static let movie = UTType("public.movie", parents: ["public.audiovisual-content"], filenameExtension: "mov")
    /// An MPEG-4 film.
    public static let mpeg4Movie = UTType("public.mpeg-4", parents: ["public.movie"], filenameExtension: "mp4")
    /// Sound.
    public static let audio = UTType("public.audio", parents: ["public.audiovisual-content"])
    /// A PDF document.
    public static let pdf = UTType("com.adobe.pdf", parents: ["public.data"], filenameExtension: "pdf")
    /// GIF images.
    public static let gif = UTType("com.compuserve.gif", parents: ["public.image"], filenameExtension: "gif")
    /// HEIC images.
    public static let heic = UTType("public.heic", parents: ["public.image"], filenameExtension: "heic")
    /// MP3 audio.
    public static let mp3 = UTType("public.mp3", parents: ["public.audio"], filenameExtension: "mp3")
    /// WAVE audio.
    public static let wav = UTType("com.microsoft.waveform-audio", parents: ["public.audio"], filenameExtension: "wav")
    /// Zip archives.
    public static let zip = UTType("public.zip-archive", parents: ["public.data"], filenameExtension: "zip")
    /// HTML.
    public static let html = UTType("public.html", parents: ["public.text"], filenameExtension: "html")

    private static let builtIn: [String: UTType] = Dictionary(uniqueKeysWithValues: [
        item, data, content, text, plainText, utf8PlainText, json, url, fileURL, image, png, jpeg,
        audiovisualContent, movie, mpeg4Movie, audio, pdf, gif, heic, mp3, wav, zip, html,
    ].map { ($0.identifier, $0) })

    /// Extensions that name a built-in type besides its preferred one.
    private static let otherExtensions: [String: UTType] = ["jpg": jpeg, "htm": html, "m4v": mpeg4Movie, "qt": movie, "wave": wav]

    /// The built-in type whose files have the extension `filenameExtension` (case-insensitive,
    /// without the dot) and that conforms to `supertype`, as UniformTypeIdentifiers'; nil when no
    /// built-in type has it (Apple would make a dynamic type; here the program declares one).
    public init?(filenameExtension: String, conformingTo supertype: UTType = .data) {
        let wanted = filenameExtension.lowercased()
        let found = UTType.otherExtensions[wanted]
            ?? UTType.builtIn.values.sorted { $0.identifier < $1.identifier }.first { $0.preferredFilenameExtension == wanted
                && $0.identifier != UTType.utf8PlainText.identifier }
        guard let found, found.conforms(to: supertype) else { return nil }
        self = found
    }
}
