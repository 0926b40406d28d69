/// A value that is always sent as a query string, whatever the method.
///
/// Any `Encodable` type gets the implementation for free:
///
/// ```swift
/// struct UserQuery: QueryEncodable, Encodable {
///     var name: String
///     var tags: [String]
/// }
/// // name=Ada&tags%5B%5D=a&tags%5B%5D=b
/// ```
///
/// A type may also write ``toQuery()`` by hand. Nested dictionaries become `key[sub]=value`,
/// arrays `key[]=value`, `Bool` `true`/`false` and `Date` ISO 8601 in UTC.
public protocol QueryEncodable {
    /// The query items as a dictionary; values may be arrays and dictionaries.
    ///
    /// A hand-written implementation need not throw.
    ///
    /// - Throws: An error when the value cannot be expressed as query items; the call then
    ///   fails with ``LeashError/encoding(_:)``.
    func toQuery() throws -> [String: any CustomStringConvertible]
}

extension QueryEncodable where Self: Encodable {
    /// Encodes the value's coding keys as query items.
    ///
    /// - Throws: `EncodingError.invalidValue` when the value does not encode as a keyed
    ///   container, or holds a number that is not finite.
    public func toQuery() throws -> [String: any CustomStringConvertible] {
        try QueryValueEncoder.encode(self)
    }
}
