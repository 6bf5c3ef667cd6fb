import Foundation

/// A JSON value as mpv's IPC sends and takes it: command arguments, property values, event fields.
public enum MpvValue: Sendable, Equatable, Codable, CustomStringConvertible {
    /// `null`: a property without a value (no file loaded yet, say).
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([MpvValue])
    /// An object.
    case object([String: MpvValue])

    /// The number, if the value is one.
    public var double: Double? { if case .number(let value) = self { value } else { nil } }
    /// The number as an `Int`, if the value is a whole number within ±2^53 (never a trap,
    /// whatever the other end sends: `1e300` and `2.5` give nil).
    public var exactInteger: Int? {
        guard case .number(let value) = self, value.isFinite, abs(value) < 9.007_199_254_740_992e15 else { return nil }
        return Int(exactly: value)
    }
    /// The number as a media time in seconds, if it is one that converts to nanoseconds in an
    /// `Int64` with room to spare (within ±10^8 s, three years): mpv reports what a file's
    /// timestamps say, and a crafted file can say anything, so a reading beyond that is no
    /// reading rather than a trap in `Int64(seconds * 1e9)`.
    public var seconds: Double? {
        guard case .number(let value) = self, value.isFinite, abs(value) <= 1e8 else { return nil }
        return value
    }
    /// The flag, if the value is one.
    public var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    /// The string, if the value is one.
    public var string: String? { if case .string(let value) = self { value } else { nil } }
    /// The object's field `key`, if the value is an object that has it.
    public subscript(key: String) -> MpvValue? { if case .object(let fields) = self { fields[key] } else { nil } }

    /// Decodes any JSON value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([MpvValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: MpvValue].self))
        }
    }

    /// Encodes the value as JSON.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// A line for people to read.
    public var description: String {
        guard let data = try? JSONEncoder().encode(self) else { return "?" }
        return String(decoding: data, as: UTF8.self)
    }
}

extension MpvValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByFloatLiteral,
    ExpressibleByIntegerLiteral {
    /// A string argument.
    public init(stringLiteral value: String) { self = .string(value) }
    /// A flag argument.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// A number argument.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// A number argument.
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
}
