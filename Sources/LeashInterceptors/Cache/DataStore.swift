import Foundation
import Leash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where a ``CacheInterceptor`` keeps responses.
///
/// Leash ships ``MemoryStore`` (least recently used, bounded in bytes) and ``FileStore`` (one
/// file per response under a directory you choose). A store is best-effort: a response it
/// cannot keep is simply fetched again next time.
public protocol DataStore: Sendable {
    /// The entry stored under `key`, or `nil`.
    ///
    /// - Parameter key: The cache key.
    /// - Returns: The entry, or `nil`.
    func entry(for key: String) async -> CacheEntry?

    /// Stores `entry` under `key`, replacing what was there.
    ///
    /// - Parameters:
    ///   - entry: The entry.
    ///   - key: The cache key.
    func store(_ entry: CacheEntry, for key: String) async

    /// Removes the entry stored under `key`.
    ///
    /// - Parameter key: The cache key.
    func removeEntry(for key: String) async

    /// Removes every entry, for instance when the user signs out.
    func removeAll() async
}

/// A cached response: status, headers, body and when it was stored.
public struct CacheEntry: Sendable, Codable, Hashable {
    /// The URL the response came from.
    public var url: String
    /// The status code.
    public var statusCode: Int
    /// The response headers.
    public var headers: [String: String]
    /// The body.
    public var data: Data
    /// When the response was stored (or last revalidated).
    public var storedAt: Date

    /// Creates an entry.
    ///
    /// - Parameters:
    ///   - url: The URL the response came from.
    ///   - statusCode: The status code.
    ///   - headers: The response headers.
    ///   - data: The body.
    ///   - storedAt: When it was stored.
    public init(url: String, statusCode: Int, headers: [String: String], data: Data, storedAt: Date = Date()) {
        self.url = url
        self.statusCode = statusCode
        self.headers = headers
        self.data = data
        self.storedAt = storedAt
    }

    /// The value of a header, by case-insensitive name.
    ///
    /// - Parameter name: The header name.
    /// - Returns: The value, or `nil`.
    public func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Roughly how many bytes the entry takes: body, headers and URL.
    public var cost: Int {
        data.count + url.utf8.count + headers.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
    }
}
