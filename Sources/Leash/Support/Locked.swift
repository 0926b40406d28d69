#if canImport(Darwin)
    import os
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A value guarded by a lock, for the few places that share mutable state across tasks.
///
/// The value and the lock live in one allocation (a `ManagedBuffer`), because the pipeline
/// makes a few of these per call. `Synchronization.Mutex` would do, but it needs macOS 15 /
/// iOS 18 and Leash supports macOS 13 / iOS 16.
package struct Locked<Value>: @unchecked Sendable {
    // Safe: the value is only reached through `withLock`, which holds the lock.
    private let storage: Storage

    /// Creates a lock around `value`.
    package init(_ value: Value) {
        storage = Storage.make(value)
    }

    /// Runs `body` with exclusive access to the value and returns what it returns.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { value, lock in
            Self.lock(lock)
            defer { Self.unlock(lock) }
            return try body(&value.pointee)
        }
    }

    #if canImport(Darwin)
        typealias Primitive = os_unfair_lock_s
        private static func lock(_ lock: UnsafeMutablePointer<Primitive>) { os_unfair_lock_lock(lock) }
        private static func unlock(_ lock: UnsafeMutablePointer<Primitive>) { os_unfair_lock_unlock(lock) }
    #else
        typealias Primitive = pthread_mutex_t
        private static func lock(_ lock: UnsafeMutablePointer<Primitive>) { pthread_mutex_lock(lock) }
        private static func unlock(_ lock: UnsafeMutablePointer<Primitive>) { pthread_mutex_unlock(lock) }
    #endif

    /// The value (as the header) and the lock (as the single element) in one allocation.
    final class Storage: ManagedBuffer<Value, Primitive> {
        static func make(_ value: Value) -> Storage {
            let buffer = Storage.create(minimumCapacity: 1) { _ in value }
            let storage = unsafeDowncast(buffer, to: Storage.self)
            storage.withUnsafeMutablePointerToElements { lock in
                #if canImport(Darwin)
                    lock.initialize(to: os_unfair_lock_s())
                #else
                    lock.initialize(to: pthread_mutex_t())
                    pthread_mutex_init(lock, nil)
                #endif
            }
            return storage
        }

        deinit {
            withUnsafeMutablePointerToElements { lock in
                #if !canImport(Darwin)
                    pthread_mutex_destroy(lock)
                #endif
                _ = lock.deinitialize(count: 1)
            }
        }
    }
}
