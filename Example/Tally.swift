import Foundation

/// A counter shared between the tour and its interceptors' closures.
final class Tally: @unchecked Sendable {
    // Safe: `value` is only touched while holding `lock`.
    private let lock = NSLock()
    private var value = 0

    var count: Int { lock.withLock { value } }

    func add() {
        lock.withLock { value += 1 }
    }

    func set(_ newValue: Int) {
        lock.withLock { value = newValue }
    }
}
