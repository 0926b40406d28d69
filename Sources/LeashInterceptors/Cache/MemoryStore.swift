import Foundation
import Leash

/// An in-memory ``DataStore`` that evicts the least recently used entries beyond a byte limit.
///
/// ```swift
/// let cache = CacheInterceptor(policy: .cacheAndRenew, store: MemoryStore(byteLimit: 5_000_000))
/// ```
public actor MemoryStore: DataStore {
    /// The most bytes the entries may take together.
    public let byteLimit: Int
    /// The bytes the entries take now.
    public private(set) var totalCost = 0

    /// A node of the recency list; the head is the most recently used.
    private final class Node {
        let key: String
        var entry: CacheEntry
        var newer: Node?
        var older: Node?

        init(key: String, entry: CacheEntry) {
            self.key = key
            self.entry = entry
        }
    }

    private var nodes: [String: Node] = [:]
    private var newest: Node?
    private var oldest: Node?

    /// Creates a store.
    ///
    /// - Parameter byteLimit: The most bytes the entries may take; 10 MB by default. An entry
    ///   larger than the limit is not stored.
    public init(byteLimit: Int = 10_000_000) {
        self.byteLimit = byteLimit
    }

    /// How many entries are stored.
    public var count: Int { nodes.count }

    /// The entry under `key`, which becomes the most recently used.
    ///
    /// - Parameter key: The cache key.
    /// - Returns: The entry, or `nil`.
    public func entry(for key: String) -> CacheEntry? {
        guard let node = nodes[key] else { return nil }
        unlink(node)
        pushNewest(node)
        return node.entry
    }

    /// Stores `entry`, evicting the least recently used entries while over the limit.
    ///
    /// - Parameters:
    ///   - entry: The entry.
    ///   - key: The cache key.
    public func store(_ entry: CacheEntry, for key: String) {
        removeEntry(for: key)
        guard entry.cost <= byteLimit else { return }
        let node = Node(key: key, entry: entry)
        nodes[key] = node
        pushNewest(node)
        totalCost += entry.cost
        while totalCost > byteLimit, let victim = oldest {
            removeEntry(for: victim.key)
        }
    }

    /// Removes the entry under `key`.
    ///
    /// - Parameter key: The cache key.
    public func removeEntry(for key: String) {
        guard let node = nodes.removeValue(forKey: key) else { return }
        unlink(node)
        totalCost -= node.entry.cost
    }

    /// Removes every entry.
    public func removeAll() {
        nodes.removeAll()
        newest = nil
        oldest = nil
        totalCost = 0
    }

    private func pushNewest(_ node: Node) {
        node.older = newest
        node.newer = nil
        newest?.newer = node
        newest = node
        if oldest == nil { oldest = node }
    }

    private func unlink(_ node: Node) {
        node.newer?.older = node.older
        node.older?.newer = node.newer
        if newest === node { newest = node.older }
        if oldest === node { oldest = node.newer }
        node.newer = nil
        node.older = nil
    }
}
