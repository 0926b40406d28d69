import Foundation

/// Turns an `Encodable` value into the dictionary form that ``QueryString`` writes out.
enum QueryValueEncoder {
    static func encode(_ value: some Encodable) throws -> [String: any CustomStringConvertible] {
        let node = try Node.encoding(value, codingPath: [])
        guard let object = node.object else {
            throw EncodingError.invalidValue(
                value,
                .init(codingPath: [], debugDescription: "A QueryEncodable value must encode as a keyed container.")
            )
        }
        return object.compactMapValues { $0.resolved }
    }

    /// What one encoded value became; a class so containers can fill it in after handing it out.
    final class Node {
        var scalar: (any CustomStringConvertible)?
        var array: [Node]?
        var object: [String: Node]?

        var resolved: (any CustomStringConvertible)? {
            if let scalar { return scalar }
            if let array { return array.compactMap(\.resolved) }
            if let object { return object.compactMapValues { $0.resolved } }
            return nil
        }

        static func encoding(_ value: some Encodable, codingPath: [any CodingKey]) throws -> Node {
            let node = Node()
            switch value {
            case let date as Date:
                node.scalar = date.formatted(.iso8601)
            case let data as Data:
                node.scalar = data.base64EncodedString()
            case let url as URL:
                node.scalar = url.absoluteString
            case let decimal as Decimal:
                node.scalar = decimal.description
            default:
                try value.encode(to: NodeEncoder(node: node, codingPath: codingPath))
            }
            return node
        }
    }

    struct IndexKey: CodingKey {
        var stringValue: String { String(intValue ?? 0) }
        var intValue: Int?
        init(_ index: Int) { intValue = index }
        init?(stringValue: String) { nil }
        init?(intValue: Int) { self.intValue = intValue }
    }

    struct NodeEncoder: Encoder, SingleValueEncodingContainer {
        let node: Node
        var codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            if node.object == nil { node.object = [:] }
            return KeyedEncodingContainer(KeyedContainer<Key>(node: node, codingPath: codingPath))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            if node.array == nil { node.array = [] }
            return UnkeyedContainer(node: node, codingPath: codingPath)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer { self }

        func encodeNil() throws {}
        func encode(_ value: Bool) throws { node.scalar = value }
        func encode(_ value: String) throws { node.scalar = value }
        func encode(_ value: Double) throws { node.scalar = try finite(value) }
        func encode(_ value: Float) throws { node.scalar = try finite(value) }
        func encode(_ value: Int) throws { node.scalar = value }
        func encode(_ value: Int8) throws { node.scalar = value }
        func encode(_ value: Int16) throws { node.scalar = value }
        func encode(_ value: Int32) throws { node.scalar = value }
        func encode(_ value: Int64) throws { node.scalar = value }
        func encode(_ value: UInt) throws { node.scalar = value }
        func encode(_ value: UInt8) throws { node.scalar = value }
        func encode(_ value: UInt16) throws { node.scalar = value }
        func encode(_ value: UInt32) throws { node.scalar = value }
        func encode(_ value: UInt64) throws { node.scalar = value }

        func encode<T: Encodable>(_ value: T) throws {
            let child = try Node.encoding(value, codingPath: codingPath)
            node.scalar = child.scalar
            node.array = child.array
            node.object = child.object
        }

        private func finite<F: BinaryFloatingPoint & CustomStringConvertible>(_ value: F) throws -> F {
            guard value.isFinite else {
                throw EncodingError.invalidValue(
                    value,
                    .init(codingPath: codingPath, debugDescription: "\(value) cannot be sent in a query string.")
                )
            }
            return value
        }
    }

    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: Node
        var codingPath: [any CodingKey]

        func encodeNil(forKey key: Key) throws {}

        func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            let child = try Node.encoding(value, codingPath: codingPath + [key])
            node.object?[key.stringValue] = child
        }

        func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type,
            forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            child(for: key).container(keyedBy: keyType)
        }

        func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            child(for: key).unkeyedContainer()
        }

        func superEncoder() -> any Encoder {
            child(for: Key(stringValue: "super")!)
        }

        func superEncoder(forKey key: Key) -> any Encoder {
            child(for: key)
        }

        private func child(for key: Key) -> NodeEncoder {
            let child = Node()
            node.object?[key.stringValue] = child
            return NodeEncoder(node: child, codingPath: codingPath + [key])
        }
    }

    struct UnkeyedContainer: UnkeyedEncodingContainer {
        let node: Node
        var codingPath: [any CodingKey]
        var count: Int { node.array?.count ?? 0 }

        func encodeNil() throws {}

        func encode<T: Encodable>(_ value: T) throws {
            let child = try Node.encoding(value, codingPath: codingPath + [IndexKey(count)])
            node.array?.append(child)
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey>
        {
            child().container(keyedBy: keyType)
        }

        func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            child().unkeyedContainer()
        }

        func superEncoder() -> any Encoder {
            child()
        }

        private func child() -> NodeEncoder {
            let child = Node()
            let path = codingPath + [IndexKey(count)]
            node.array?.append(child)
            return NodeEncoder(node: child, codingPath: path)
        }
    }
}
