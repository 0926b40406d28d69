import Foundation

/// Reads fuzzer bytes as choices: how many, which kind, which characters.
struct Input {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { offset >= bytes.count }

    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A string of up to 15 bytes, decoded as UTF-8 (invalid bytes become U+FFFD).
    mutating func string() -> String {
        let length = Int(byte() % 16)
        var raw: [UInt8] = []
        for _ in 0..<length where !isAtEnd { raw.append(byte()) }
        return String(decoding: raw, as: UTF8.self)
    }

    /// Up to 64 raw bytes.
    mutating func data() -> Data {
        let length = Int(byte() % 64)
        var raw: [UInt8] = []
        for _ in 0..<length where !isAtEnd { raw.append(byte()) }
        return Data(raw)
    }

    mutating func double() -> Double {
        var bits: UInt64 = 0
        for _ in 0..<8 { bits = bits << 8 | UInt64(byte()) }
        return Double(bitPattern: bits)
    }
}

/// Stops the fuzzer with the failing input when an invariant breaks.
func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}
