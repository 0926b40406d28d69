import Foundation
import Leash

/// A ``DataStore`` that keeps one file per response under a directory you choose.
///
/// ```swift
/// let directory = FileManager.default.temporaryDirectory.appendingPathComponent("api-cache")
/// let cache = CacheInterceptor(policy: .timeToLive(.seconds(300)), store: FileStore(directory: directory))
/// ```
///
/// Each file holds a line of JSON with the status, headers and key, then the body. Files are
/// written atomically, so a crash leaves the old entry or the new one, never half of one. A
/// file that cannot be read back is treated as missing.
public actor FileStore: DataStore {
    /// The directory that holds the files.
    public let directory: URL

    private struct Head: Codable {
        var key: String
        var url: String
        var statusCode: Int
        var headers: [String: String]
        var storedAt: Date
    }

    /// Creates a store under `directory`, which is created when first needed.
    ///
    /// - Parameter directory: The directory; use one that holds nothing else.
    public init(directory: URL) {
        self.directory = directory
    }

    /// The entry stored under `key`, or `nil` when none is stored or its file is unreadable.
    ///
    /// - Parameter key: The cache key.
    /// - Returns: The entry, or `nil`.
    public func entry(for key: String) -> CacheEntry? {
        guard let contents = try? Data(contentsOf: file(for: key)),
            let newline = contents.firstIndex(of: UInt8(ascii: "\n")),
            let head = try? JSONDecoder().decode(Head.self, from: contents[..<newline]),
            head.key == key
        else { return nil }
        return CacheEntry(
            url: head.url,
            statusCode: head.statusCode,
            headers: head.headers,
            data: Data(contents[contents.index(after: newline)...]),
            storedAt: head.storedAt
        )
    }

    /// Writes `entry` to its file, replacing the previous one atomically.
    ///
    /// - Parameters:
    ///   - entry: The entry.
    ///   - key: The cache key.
    public func store(_ entry: CacheEntry, for key: String) {
        let head = Head(
            key: key, url: entry.url, statusCode: entry.statusCode, headers: entry.headers, storedAt: entry.storedAt)
        guard var contents = try? JSONEncoder().encode(head) else { return }
        contents.append(UInt8(ascii: "\n"))
        contents.append(entry.data)
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try? contents.write(to: file(for: key), options: .atomic)
    }

    /// Deletes the file of `key`.
    ///
    /// - Parameter key: The cache key.
    public func removeEntry(for key: String) {
        try? FileManager.default.removeItem(at: file(for: key))
    }

    /// Deletes every cache file in the directory.
    public func removeAll() {
        let files = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
        for file in files where file.pathExtension == "leashcache" {
            try? FileManager.default.removeItem(at: file)
        }
    }

    /// The file of `key`: a 64-bit FNV-1a hash of the key, which the file repeats to rule out
    /// collisions.
    private func file(for key: String) -> URL {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return directory.appendingPathComponent(String(hash, radix: 16) + ".leashcache")
    }
}
