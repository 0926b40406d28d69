/// A key for a value stored in a ``CallContext``.
///
/// ```swift
/// enum CacheMark: CallContextKey {
///     typealias Value = Bool
/// }
/// chain.context[CacheMark.self] = true
/// ```
public protocol CallContextKey {
    /// The type of the value stored under this key.
    associatedtype Value: Sendable
}

/// Per-call storage shared by every phase and every retry of one call.
///
/// An interceptor can leave a value in one phase and read it in a later one, or in a later
/// attempt, without a global dictionary. Each call gets a new, empty context.
public final class CallContext: Sendable {
    private let storage = Locked<[ObjectIdentifier: any Sendable]>([:])

    /// Creates an empty context.
    public init() {}

    /// The value stored under `key`, or `nil`; assigning `nil` removes it.
    public subscript<Key: CallContextKey>(key: Key.Type) -> Key.Value? {
        get { storage.withLock { $0[ObjectIdentifier(key)] } as? Key.Value }
        set { storage.withLock { $0[ObjectIdentifier(key)] = newValue } }
    }

    /// Runs `body` under the call's lock, which also guards the decisions of its chains.
    func synchronized<Result>(_ body: () -> Result) -> Result {
        storage.withLock { _ in body() }
    }
}
