import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Turns a response body into the value a typed call returns.
///
/// ```swift
/// struct TextSerializer: Serializer {
///     func serialize(data: Data, response: HTTPURLResponse?) throws -> String {
///         String(decoding: data, as: UTF8.self)
///     }
/// }
/// let text = try await client.execute(API.readme, serializer: TextSerializer())
/// ```
///
/// An error thrown here that is not a ``LeashError`` becomes
/// ``LeashError/decoding(_:data:)``.
public protocol Serializer: Sendable {
    /// The type of value produced.
    associatedtype Value: Sendable

    /// Produces the value from a body.
    ///
    /// - Parameters:
    ///   - data: The response body.
    ///   - response: The response head, or `nil` when an interceptor produced the body.
    /// - Returns: The value.
    /// - Throws: When the body does not hold a value of the type.
    func serialize(data: Data, response: HTTPURLResponse?) throws -> Value
}

/// The default serializer: decodes JSON with the manager's `JSONDecoder`.
///
/// ``Empty`` accepts any body, including none; any other type fails with
/// ``LeashError/decoding(_:data:)`` on an empty body.
public struct JSONDecodableSerializer<Value: Decodable & Sendable>: Serializer {
    /// The decoder used.
    public let decoder: JSONDecoder

    /// Creates a serializer that decodes with `decoder`.
    ///
    /// - Parameter decoder: The decoder; typed calls pass the manager's.
    public init(decoder: JSONDecoder = JSONDecoder()) {
        self.decoder = decoder
    }

    /// Decodes `data` as `Value`.
    ///
    /// - Parameters:
    ///   - data: The response body.
    ///   - response: The response head; unused.
    /// - Returns: The decoded value.
    /// - Throws: ``LeashError/decoding(_:data:)`` for an empty body or a body that does not
    ///   decode.
    public func serialize(data: Data, response: HTTPURLResponse?) throws -> Value {
        // A metatype comparison: cheaper than casting on every call.
        if Value.self == Empty.self { return Empty() as! Value }
        guard !data.isEmpty else {
            throw LeashError.decoding(EmptyBodyError(type: "\(Value.self)"), data: data)
        }
        do {
            return try decoder.decode(Value.self, from: data)
        } catch {
            throw LeashError.decoding(error, data: data)
        }
    }
}

/// The value of a response that has no body worth reading, such as a 204.
///
/// `Empty` accepts any body, including none.
public struct Empty: Codable, Sendable, Hashable {
    /// Creates the empty value.
    public init() {}
}

/// The body was empty but the call asked for a value other than ``Empty``.
struct EmptyBodyError: Error, CustomStringConvertible {
    let type: String
    var description: String { "the body is empty, so it holds no \(type); ask for Empty instead" }
}
