import TandemMediaTypes

/// Encodes an `Encodable` value into a `JSONValue` tree, keeping whole numbers and fractions
/// apart, so that an event's JSON line and its readable line come from one encoding.
///
/// Two keyed containers asked of one encoder share one object, as `JSONEncoder`'s do: an
/// event writes its name, then its fields, into the same object.
struct JSONValueEncoder {
    /// `value` as a tree.
    static func encode(_ value: some Encodable) throws -> JSONValue {
        let node = Node()
        try value.encode(to: NodeEncoder(node: node, codingPath: []))
        return node.value
    }
}

/// One place in the tree being written.
private final class Node {
    enum Content {
        case unset
        case value(JSONValue)
        case object([String: Node])
        case array([Node])
    }

    var content = Content.unset

    var value: JSONValue {
        switch content {
        case .unset: .object([:])
        case .value(let value): value
        case .object(let fields): .object(fields.mapValues(\.value))
        case .array(let elements): .array(elements.map(\.value))
        }
    }

    func child(forKey key: String) -> Node {
        let child = Node()
        var fields: [String: Node] = [:]
        if case .object(let existing) = content { fields = existing }
        fields[key] = child
        content = .object(fields)
        return child
    }

    func appended() -> Node {
        let child = Node()
        var elements: [Node] = []
        if case .array(let existing) = content { elements = existing }
        elements.append(child)
        content = .array(elements)
        return child
    }

    func set(_ value: JSONValue) { content = .value(value) }

    /// `value` written into this node: a leaf for the kinds JSON has, a nested encoding otherwise.
    func encode(_ value: some Encodable, codingPath: [any CodingKey]) throws {
        switch value {
        case let value as Bool: set(.bool(value))
        case let value as String: set(.string(value))
        case let value as Double: set(.double(value))
        case let value as Float: set(.double(Double(value)))
        case let value as Int: set(.int(Int64(value)))
        case let value as Int64: set(.int(value))
        case let value as Int32: set(.int(Int64(value)))
        case let value as Int16: set(.int(Int64(value)))
        case let value as Int8: set(.int(Int64(value)))
        case let value as UInt8: set(.int(Int64(value)))
        case let value as UInt16: set(.int(Int64(value)))
        case let value as UInt32: set(.int(Int64(value)))
        case let value as UInt64: set(value <= UInt64(Int64.max) ? .int(Int64(value)) : .double(Double(value)))
        case let value as UInt: set(value <= UInt(Int64.max) ? .int(Int64(value)) : .double(Double(value)))
        case let value as JSONValue: set(value)
        default: try value.encode(to: NodeEncoder(node: self, codingPath: codingPath))
        }
    }
}

private struct NodeEncoder: Encoder {
    let node: Node
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object = node.content {} else { node.content = .object([:]) }
        return KeyedEncodingContainer(KeyedNode<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = node.content {} else { node.content = .array([]) }
        return UnkeyedNode(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleNode(node: node, codingPath: codingPath) }
}

private struct KeyedNode<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: Node
    var codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { node.child(forKey: key.stringValue).set(.null) }

    mutating func encode(_ value: some Encodable, forKey key: Key) throws {
        try node.child(forKey: key.stringValue).encode(value, codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        NodeEncoder(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        NodeEncoder(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { NodeEncoder(node: node.child(forKey: "super"), codingPath: codingPath) }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        NodeEncoder(node: node.child(forKey: key.stringValue), codingPath: codingPath + [key])
    }
}

private struct UnkeyedNode: UnkeyedEncodingContainer {
    let node: Node
    var codingPath: [any CodingKey]
    var count: Int {
        if case .array(let elements) = node.content { return elements.count }
        return 0
    }

    mutating func encodeNil() throws { node.appended().set(.null) }

    mutating func encode(_ value: some Encodable) throws { try node.appended().encode(value, codingPath: codingPath) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        NodeEncoder(node: node.appended(), codingPath: codingPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        NodeEncoder(node: node.appended(), codingPath: codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { NodeEncoder(node: node.appended(), codingPath: codingPath) }
}

private struct SingleNode: SingleValueEncodingContainer {
    let node: Node
    var codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.set(.null) }

    mutating func encode(_ value: some Encodable) throws { try node.encode(value, codingPath: codingPath) }
}
