import Foundation

/// A value that can be sent as bytes or as a file: Tandem's own stand-in for CoreTransferable's
/// `Transferable` (Linux has no CoreTransferable), of the same shape, so that a conformance
/// written for Apple with `DataRepresentation`, `CodableRepresentation`, `FileRepresentation`
/// or `ProxyRepresentation` compiles unchanged:
///
/// ```swift
/// struct Note: Codable, Transferable {
///     var text: String
///     static var transferRepresentation: some TransferRepresentation {
///         CodableRepresentation(contentType: .json)
///     }
/// }
/// ```
///
/// `GroupSessionJournal.add(_:)` sends the first representation that exports, with its content
/// type; `Attachment.load(_:)` takes the first of the loaded type's representations that imports
/// that content type. (`SendableMetatype`, which every ordinary type meets, lets the
/// representations' closures run on any thread.)
public protocol Transferable: SendableMetatype {
    /// The type of the representation.
    associatedtype Representation: TransferRepresentation

    /// How the value is sent and received, in order of preference.
    @TransferRepresentationBuilder<Self> static var transferRepresentation: Representation { get }
}

/// One way to send and receive a `Transferable` value, or several combined with the builder.
///
/// Write your own as Apple's: a `body` made of other representations. The primitive ones
/// (data, codable, file, proxy) provide `transferRepresentations` directly.
public protocol TransferRepresentation<Item>: Sendable {
    /// The value it represents.
    associatedtype Item: Transferable
    /// The representation it is made of.
    associatedtype Body: TransferRepresentation where Body.Item == Item

    /// The representations this one is made of.
    @TransferRepresentationBuilder<Item> var body: Body { get }

    /// The representation as the journal uses it: each way it sends and receives, in order.
    /// Provided by the primitive representations; others get it from `body`.
    var transferRepresentations: [TransferWay<Item>] { get }
}

extension TransferRepresentation {
    /// The ways of `body`.
    public var transferRepresentations: [TransferWay<Item>] { body.transferRepresentations }
}

/// What a representation moves: bytes, or a file on disk.
public enum TransferPayload: Sendable {
    /// Bytes in memory.
    case data(Data)
    /// A file, read when sent (its size checked first).
    case file(URL)
}

/// One way of sending and receiving an `Item`: its content type, and either direction (a
/// representation made with `exportedContentType:` only exports; `importedContentType:` only
/// imports).
public struct TransferWay<Item>: Sendable {
    /// The content type it sends or accepts.
    public let contentType: UTType
    /// Makes the payload to send, if this way exports.
    public let export: (@Sendable (Item) async throws -> TransferPayload)?
    /// Makes a value from received bytes, if this way imports.
    public let `import`: (@Sendable (TransferPayload) async throws -> Item)?
    /// The file name the receiver is offered (`suggestedFileName(_:)`), if any.
    public let suggestedFileName: (@Sendable (Item) -> String?)?
    /// Whether this way exports a given value (`exportingCondition(_:)`); nil: always.
    public let exportingCondition: (@Sendable (Item) -> Bool)?

    /// A way with the given directions.
    public init(contentType: UTType, export: (@Sendable (Item) async throws -> TransferPayload)?,
                import: (@Sendable (TransferPayload) async throws -> Item)?,
                suggestedFileName: (@Sendable (Item) -> String?)? = nil, exportingCondition: (@Sendable (Item) -> Bool)? = nil) {
        self.contentType = contentType
        self.export = export
        self.import = `import`
        self.suggestedFileName = suggestedFileName
        self.exportingCondition = exportingCondition
    }

    /// Whether this way exports `item`: it has an export, and its condition (if any) holds.
    public func exports(_ item: Item) -> Bool {
        export != nil && (exportingCondition?(item) ?? true)
    }

    /// This way with `change` applied to a copy of its modifiers.
    func modified(suggestedFileName name: (@Sendable (Item) -> String?)?? = nil,
                  exportingCondition condition: (@Sendable (Item) -> Bool)?? = nil) -> TransferWay {
        TransferWay(contentType: contentType, export: export, import: self.import,
                    suggestedFileName: name ?? suggestedFileName, exportingCondition: condition ?? exportingCondition)
    }
}

/// A representation with a modifier applied (`suggestedFileName(_:)`, `exportingCondition(_:)`),
/// as Apple's modifiers return.
public struct ModifiedTransferRepresentation<Item: Transferable>: TransferRepresentation {
    private let ways: [TransferWay<Item>]

    init(_ ways: [TransferWay<Item>]) { self.ways = ways }

    /// Itself.
    public var body: Self { self }

    /// The ways of the representation it modifies, modified.
    public var transferRepresentations: [TransferWay<Item>] { ways }
}

extension TransferRepresentation {
    /// Offers the receiver `fileName` for what this representation exports, as Apple's
    /// modifier (the journal names the attachment so).
    public func suggestedFileName(_ fileName: String) -> ModifiedTransferRepresentation<Item> {
        ModifiedTransferRepresentation(transferRepresentations.map { $0.modified(suggestedFileName: .some { _ in fileName }) })
    }

    /// Offers the receiver the file name `fileName` gives each value, as Apple's modifier.
    public func suggestedFileName(_ fileName: @escaping @Sendable (Item) -> String?) -> ModifiedTransferRepresentation<Item> {
        ModifiedTransferRepresentation(transferRepresentations.map { $0.modified(suggestedFileName: .some(fileName)) })
    }

    /// Exports only values for which `condition` holds, as Apple's modifier: for the others the
    /// next representation is tried.
    public func exportingCondition(_ condition: @escaping @Sendable (Item) -> Bool) -> ModifiedTransferRepresentation<Item> {
        ModifiedTransferRepresentation(transferRepresentations.map { way in
            let previous = way.exportingCondition
            return way.modified(exportingCondition: .some { item in (previous?(item) ?? true) && condition(item) })
        })
    }
}

/// Combines representations in order, as Apple's `@TransferRepresentationBuilder`.
@resultBuilder
public enum TransferRepresentationBuilder<Item: Transferable> {
    /// One representation.
    public static func buildExpression<R: TransferRepresentation>(_ representation: R) -> R where R.Item == Item {
        representation
    }

    /// The first of a block.
    public static func buildPartialBlock<R: TransferRepresentation>(first: R) -> R where R.Item == Item { first }

    /// The block so far, then the next.
    public static func buildPartialBlock<First: TransferRepresentation, Next: TransferRepresentation>(
        accumulated: First, next: Next
    ) -> TransferRepresentations<Item, First, Next> where First.Item == Item, Next.Item == Item {
        TransferRepresentations(first: accumulated, next: next)
    }
}

/// Two representations, the first preferred: what the builder makes of a block.
public struct TransferRepresentations<Item: Transferable, First: TransferRepresentation, Next: TransferRepresentation>: TransferRepresentation
where First.Item == Item, Next.Item == Item {
    let first: First
    let next: Next

    /// Itself.
    public var body: Self { self }
    /// The first's ways, then the next's.
    public var transferRepresentations: [TransferWay<Item>] { first.transferRepresentations + next.transferRepresentations }
}

/// A value as bytes of a content type, as Apple's `DataRepresentation`.
public struct DataRepresentation<Item: Transferable>: TransferRepresentation {
    private let way: TransferWay<Item>

    /// Sends and receives the value as bytes of `contentType`.
    public init(contentType: UTType, exporting: @escaping @Sendable (Item) async throws -> Data,
                importing: @escaping @Sendable (Data) async throws -> Item) {
        way = TransferWay(contentType: contentType, export: { .data(try await exporting($0)) },
                          import: { try await importing(try await $0.loadedData()) })
    }

    /// Only sends the value, as bytes of `exportedContentType`.
    public init(exportedContentType: UTType, exporting: @escaping @Sendable (Item) async throws -> Data) {
        way = TransferWay(contentType: exportedContentType, export: { .data(try await exporting($0)) }, import: nil)
    }

    /// Only receives the value, from bytes of `importedContentType`.
    public init(importedContentType: UTType, importing: @escaping @Sendable (Data) async throws -> Item) {
        way = TransferWay(contentType: importedContentType, export: nil, import: { try await importing(try await $0.loadedData()) })
    }

    /// Itself.
    public var body: Self { self }
    /// Its one way.
    public var transferRepresentations: [TransferWay<Item>] { [way] }
}

/// A `Codable` value as JSON of a content type, as Apple's `CodableRepresentation`.
///
/// Apple's is generic over the encoder and decoder (Combine's `TopLevelEncoder`, which Linux
/// lacks); this one takes a `JSONEncoder` and `JSONDecoder`, the defaults of Apple's.
public struct CodableRepresentation<Item: Transferable & Codable>: TransferRepresentation {
    private let way: TransferWay<Item>

    /// The value as JSON of `contentType`.
    public init(contentType: UTType) {
        self.init(contentType: contentType, encoder: JSONEncoder(), decoder: JSONDecoder())
    }

    /// The value of `type` as JSON of `contentType`.
    public init(for type: Item.Type, contentType: UTType) {
        self.init(contentType: contentType)
    }

    /// The value as JSON of `contentType`, with the given coders.
    public init(for type: Item.Type = Item.self, contentType: UTType, encoder: JSONEncoder, decoder: JSONDecoder) {
        let coders = Coders(encoder: encoder, decoder: decoder)
        way = TransferWay(contentType: contentType, export: { item in .data(try coders.encode(item)) },
                          import: { payload in try coders.decode(Item.self, from: try await payload.loadedData()) })
    }

    /// Itself.
    public var body: Self { self }
    /// Its one way.
    public var transferRepresentations: [TransferWay<Item>] { [way] }
}

/// A JSON encoder and decoder used from one representation; each call makes fresh copies of
/// their settings, so that they are never shared between threads.
private struct Coders: Sendable {
    let encoder: JSONEncoder
    let decoder: JSONDecoder

    func encode<Value: Encodable>(_ value: Value) throws -> Data {
        let fresh = JSONEncoder()
        fresh.outputFormatting = encoder.outputFormatting
        fresh.dateEncodingStrategy = encoder.dateEncodingStrategy
        fresh.dataEncodingStrategy = encoder.dataEncodingStrategy
        fresh.keyEncodingStrategy = encoder.keyEncodingStrategy
        return try fresh.encode(value)
    }

    func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        let fresh = JSONDecoder()
        fresh.dateDecodingStrategy = decoder.dateDecodingStrategy
        fresh.dataDecodingStrategy = decoder.dataDecodingStrategy
        fresh.keyDecodingStrategy = decoder.keyDecodingStrategy
        return try fresh.decode(type, from: data)
    }
}

/// A file sent for a value, as Apple's `SentTransferredFile`.
public struct SentTransferredFile: Sendable {
    /// The file.
    public let file: URL
    /// Whether the receiver may use the original (always a copy here: it crosses machines).
    public let allowAccessingOriginalFile: Bool

    /// Sends `file`.
    public init(_ file: URL, allowAccessingOriginalFile: Bool = false) {
        self.file = file
        self.allowAccessingOriginalFile = allowAccessingOriginalFile
    }
}

/// A file received for a value, as Apple's `ReceivedTransferredFile`: a copy in the temporary
/// directory, which the importer moves or reads.
public struct ReceivedTransferredFile: Sendable {
    /// The received file.
    public let file: URL
    /// Whether it is the sender's original (never here: it crossed machines).
    public let isOriginalFile: Bool
}

/// A value as a file of a content type, as Apple's `FileRepresentation`.
public struct FileRepresentation<Item: Transferable>: TransferRepresentation {
    private let way: TransferWay<Item>

    /// Sends and receives the value as a file of `contentType`.
    public init(contentType: UTType, exporting: @escaping @Sendable (Item) async throws -> SentTransferredFile,
                importing: @escaping @Sendable (ReceivedTransferredFile) async throws -> Item) {
        way = TransferWay(contentType: contentType, export: { .file(try await exporting($0).file) },
                          import: { try await importing(try $0.receivedFile(extension: contentType.preferredFilenameExtension)) })
    }

    /// Only sends the value, as a file of `exportedContentType`.
    public init(exportedContentType: UTType, exporting: @escaping @Sendable (Item) async throws -> SentTransferredFile) {
        way = TransferWay(contentType: exportedContentType, export: { .file(try await exporting($0).file) }, import: nil)
    }

    /// Only receives the value, from a file of `importedContentType`.
    public init(importedContentType: UTType, importing: @escaping @Sendable (ReceivedTransferredFile) async throws -> Item) {
        way = TransferWay(contentType: importedContentType, export: nil,
                          import: { try await importing(try $0.receivedFile(extension: importedContentType.preferredFilenameExtension)) })
    }

    /// Itself.
    public var body: Self { self }
    /// Its one way.
    public var transferRepresentations: [TransferWay<Item>] { [way] }
}

/// A value sent as another transferable value, as Apple's `ProxyRepresentation`.
public struct ProxyRepresentation<Item: Transferable, Proxy: Transferable>: TransferRepresentation {
    private let ways: [TransferWay<Item>]

    /// Sends the value as `exporting` makes it, and receives it through `importing`.
    public init(exporting: @escaping @Sendable (Item) async throws -> Proxy,
                importing: @escaping @Sendable (Proxy) async throws -> Item) {
        ways = Proxy.transferWays.map { (proxyWay: TransferWay<Proxy>) -> TransferWay<Item> in
            var export: (@Sendable (Item) async throws -> TransferPayload)?
            if let proxyExport = proxyWay.export {
                export = { (item: Item) in try await proxyExport(try await exporting(item)) }
            }
            var load: (@Sendable (TransferPayload) async throws -> Item)?
            if let proxyImport = proxyWay.import {
                load = { (payload: TransferPayload) in try await importing(try await proxyImport(payload)) }
            }
            return TransferWay(contentType: proxyWay.contentType, export: export, import: load)
        }
    }

    /// Only sends the value, as `exporting` makes it.
    public init(exporting: @escaping @Sendable (Item) async throws -> Proxy) {
        ways = Proxy.transferWays.compactMap { (proxyWay: TransferWay<Proxy>) -> TransferWay<Item>? in
            guard let proxyExport = proxyWay.export else { return nil }
            let export: @Sendable (Item) async throws -> TransferPayload = { (item: Item) in try await proxyExport(try await exporting(item)) }
            return TransferWay(contentType: proxyWay.contentType, export: export, import: nil)
        }
    }

    /// Only receives the value, through `importing`, as Apple's `ProxyRepresentation(importing:)`.
    public init(importing: @escaping @Sendable (Proxy) async throws -> Item) {
        ways = Proxy.transferWays.compactMap { (proxyWay: TransferWay<Proxy>) -> TransferWay<Item>? in
            guard let proxyImport = proxyWay.import else { return nil }
            let load: @Sendable (TransferPayload) async throws -> Item = { (payload: TransferPayload) in
                try await importing(try await proxyImport(payload))
            }
            return TransferWay(contentType: proxyWay.contentType, export: nil, import: load)
        }
    }

    /// Itself.
    public var body: Self { self }
    /// The proxy's ways, turned into this item's.
    public var transferRepresentations: [TransferWay<Item>] { ways }
}

extension Transferable {
    /// The ways of `transferRepresentation`, as this type's (an opaque representation's item
    /// is this type in every conformance that compiles; any other yields no way).
    static var transferWays: [TransferWay<Self>] {
        transferRepresentation.transferRepresentations as? [TransferWay<Self>] ?? []
    }
}

extension TransferPayload {
    /// The bytes, reading the file if it is one.
    func loadedData() async throws -> Data {
        switch self {
        case .data(let data): data
        case .file(let url): try Data(contentsOf: url)
        }
    }

    /// A file holding the bytes, written to the temporary directory when they are in memory.
    func receivedFile(extension fileExtension: String?) throws -> ReceivedTransferredFile {
        switch self {
        case .file(let url):
            return ReceivedTransferredFile(file: url, isOriginalFile: false)
        case .data(let data):
            var url = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-\(UUID().uuidString)")
            if let fileExtension { url.appendPathExtension(fileExtension) }
            try data.write(to: url)
            return ReceivedTransferredFile(file: url, isOriginalFile: false)
        }
    }
}

extension Data: Transferable {
    /// Bytes as they are.
    public static var transferRepresentation: DataRepresentation<Data> {
        DataRepresentation(contentType: .data, exporting: { (data: Data) in data }, importing: { (data: Data) in data })
    }
}

extension String: Transferable {
    /// UTF-8 plain text.
    public static var transferRepresentation: DataRepresentation<String> {
        DataRepresentation(contentType: .utf8PlainText, exporting: { (text: String) in Data(text.utf8) }, importing: { (data: Data) in
            guard let text = String(data: data, encoding: .utf8) else {
                throw GroupSessionError(.encoding, "the attachment is not UTF-8 text")
            }
            return text
        })
    }
}

extension URL: Transferable {
    /// A file URL sends the file itself; loading gives the URL of a received copy.
    public static var transferRepresentation: FileRepresentation<URL> {
        FileRepresentation(contentType: .data, exporting: { (url: URL) in SentTransferredFile(url) },
                           importing: { (received: ReceivedTransferredFile) in received.file })
    }
}
