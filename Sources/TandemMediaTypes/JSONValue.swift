import Foundation

/// A JSON value as a tree, kinds kept apart: a whole number stays an `int`, a fraction a
/// `double` (so that `1.0` is written as Swift writes it in the readable form of an event).
///
/// It carries an event that this version does not know (`WatchPartyEvent.other`), it is what
/// `WatchPartyEvent` becomes on the way to its JSON line (`JSONValueEncoder`), and it is what
/// mpv's IPC sends and takes (`MpvValue`): command arguments, property values, event fields.
public enum JSONValue: Sendable, Hashable, Codable, CustomStringConvertible {
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
    package var foundationObject: Any {
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

extension JSONValue {
    /// A number: `int` when it is a whole number within ±2^53 (so that `number(42)` is the `42`
    /// a decoder reads), `double` otherwise.
    public static func number(_ value: Double) -> JSONValue {
        if value.isFinite, abs(value) < 9.007_199_254_740_992e15, let whole = Int64(exactly: value) { return .int(whole) }
        return .double(value)
    }

    /// The number, if the value is one (whole or not).
    public var double: Double? {
        switch self {
        case .int(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }

    /// The number as an `Int`, if the value is a whole number within ±2^53 (never a trap,
    /// whatever the other end sends: `1e300` and `2.5` give nil).
    public var exactInteger: Int? {
        guard let value = double, value.isFinite, abs(value) < 9.007_199_254_740_992e15 else { return nil }
        return Int(exactly: value)
    }

    /// The number as a media time in seconds, if it is one that converts to nanoseconds in an
    /// `Int64` with room to spare (within ±10^8 s, three years): mpv reports what a file's
    /// timestamps say, and a crafted file can say anything, so a reading beyond that is no
    /// reading rather than a trap in `Int64(seconds * 1e9)`.
    public var seconds: Double? {
        guard let value = double, value.isFinite, abs(value) <= 1e8 else { return nil }
        return value
    }

    /// The flag, if the value is one.
    public var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    /// The string, if the value is one.
    public var string: String? { if case .string(let value) = self { value } else { nil } }
    /// The object's field `key`, if the value is an object that has it.
    public subscript(key: String) -> JSONValue? { if case .object(let fields) = self { fields[key] } else { nil } }

    /// The value as one line of JSON.
    public var description: String {
        guard let data = try? JSONEncoder().encode(self) else { return "?" }
        return String(decoding: data, as: UTF8.self)
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByFloatLiteral, ExpressibleByIntegerLiteral {
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// A flag.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// A number.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// A whole number.
    public init(integerLiteral value: Int) { self = .int(Int64(value)) }
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
