import Foundation

/// A JSON value as a tree, kinds kept apart: a whole number stays an `int`, a fraction a
/// `double` (so that `1.0` is written as Swift writes it in the readable form of an event).
///
/// It carries an event that this version does not know (`WatchPartyEvent.other`), and it is
/// what `WatchPartyEvent` becomes on the way to its JSON line (`JSONValueEncoder`).
public enum JSONValue: Sendable, Hashable, Codable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A whole number.
    case int(Int64)
    /// A number with a fraction or an exponent.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// Decodes any JSON value: a boolean before a number, a whole number before a fraction.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value as it is.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The value as `JSONSerialization` takes it (`NSNull`, `Bool`, `Int`, `Double`, `String`,
    /// arrays and dictionaries of those).
    var foundationObject: Any {
        switch self {
        case .null: NSNull()
        case .bool(let value): value
        case .int(let value): Int(value)
        case .double(let value): value
        case .string(let value): value
        case .array(let values): values.map(\.foundationObject)
        case .object(let fields): fields.mapValues(\.foundationObject)
        }
    }

    /// The value as Swift's string interpolation shows the native value it came from (`1.0`,
    /// `true`, `["a", "b"]`, a string as it is): the readable form of an event's field.
    public var readable: String {
        switch self {
        case .null: "nil"
        case .bool(let value): "\(value)"
        case .int(let value): "\(value)"
        case .double(let value): "\(value)"
        case .string(let value): value
        case .array(let values):
            // Strings inside an array are quoted, as `[String]`'s description quotes them.
            if let strings = values.compactMapStrings() { "\(strings)" } else { "[" + values.map(\.readable).joined(separator: ", ") + "]" }
        case .object(let fields): "[" + fields.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value.readable)" }.joined(separator: ", ") + "]"
        }
    }
}

private extension Array where Element == JSONValue {
    /// The strings, when every element is one.
    func compactMapStrings() -> [String]? {
        var strings: [String] = []
        for element in self {
            guard case .string(let value) = element else { return nil }
            strings.append(value)
        }
        return strings
    }
}
