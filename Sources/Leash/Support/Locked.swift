import Foundation

/// A value guarded by a lock, for the few places that share mutable state across tasks.
///
/// `Synchronization.Mutex` needs macOS 15 / iOS 18; Leash supports macOS 13 / iOS 16, so it
/// uses `NSLock` instead.
package final class Locked<Value>: @unchecked Sendable {
    // Safe because every access to `value` goes through `lock`.
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value and returns what it returns.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
