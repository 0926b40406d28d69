import Foundation

// libFuzzer target for the query encoder: random nested parameters (strings, numbers, NaN
// and infinities, Booleans, arrays, dictionaries, any UTF-8 keys) must encode to a string of
// unreserved characters and escapes, throw only for non-finite numbers, and, where bracket
// notation is unambiguous, parse back to what went in.

struct Generated {
    var value: [String: Any] = [:]
    var expected: [String: FormValue] = [:]
    var hasNonFinite = false
    /// Bracket notation can say it: keys without brackets, nested keys not empty, arrays of
    /// scalars that are not empty.
    var isUnambiguous = true
}

func generate(_ input: inout Input, depth: Int, nested: Bool) -> Generated {
    var result = Generated()
    for _ in 0..<Int(input.byte() % 5) where !input.isAtEnd {
        let key = input.string()
        if key.utf8.contains(UInt8(ascii: "[")) || key.utf8.contains(UInt8(ascii: "]")) || (nested && key.isEmpty) {
            result.isUnambiguous = false
        }
        switch input.byte() % (depth > 0 ? 7 : 5) {
        case 0:
            let text = input.string()
            result.value[key] = text
            result.expected[key] = .string(text)
        case 1:
            let number = Int(Int8(bitPattern: input.byte()))
            result.value[key] = number
            result.expected[key] = .string(String(number))
        case 2:
            let number = input.double()
            result.value[key] = number
            result.expected[key] = .string(number.description)
        case 3:
            let flag = input.byte() % 2 == 0
            result.value[key] = flag
            result.expected[key] = .string(flag ? "true" : "false")
        case 4:
            let items = (0..<Int(input.byte() % 4)).map { _ in input.string() }
            if items.isEmpty { result.isUnambiguous = false }
            result.value[key] = items
            result.expected[key] = .array(items)
        default:
            let inner = generate(&input, depth: depth - 1, nested: true)
            if inner.value.isEmpty { result.isUnambiguous = false }
            result.value[key] = inner.value
            result.expected[key] = .object(inner.expected)
            result.isUnambiguous = result.isUnambiguous && inner.isUnambiguous
        }
    }
    result.hasNonFinite = containsNonFinite(result.value)
    return result
}

/// Whether a non-finite number is left once later keys have replaced earlier ones.
func containsNonFinite(_ value: Any) -> Bool {
    switch value {
    case let number as Double: return !number.isFinite
    case let members as [String: Any]: return members.values.contains(where: containsNonFinite)
    default: return false
    }
}

/// Splits a query into decoded pairs and parses them the way Rails and PHP do.
func parse(_ query: String) -> FormValue {
    guard !query.isEmpty else { return .object([:]) }
    let pairs = query.split(separator: "&", omittingEmptySubsequences: false).map { pair in
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        require(parts.count == 2, "a pair without '=': \(pair)")
        guard let name = String(parts[0]).removingPercentEncoding,
            let value = String(parts[1]).removingPercentEncoding
        else {
            fatalError("an escape that does not decode: \(pair)")
        }
        return (name: name, value: value)
    }
    return FormValue.parse(pairs: pairs)
}

let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%=&".utf8)

/// The libFuzzer entry point: builds one input for the query encoder from the bytes and checks it;
/// a broken promise traps, which libFuzzer reports as a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    var input = Input(Array(UnsafeBufferPointer(start: start, count: count)))
    let generated = generate(&input, depth: 3, nested: false)
    let query: String
    do {
        query = try QueryString.encode(generated.value)
    } catch {
        require(generated.hasNonFinite, "threw for finite input: \(error) \(generated.value)")
        return 0
    }
    require(!generated.hasNonFinite, "encoded a non-finite number: \(query)")
    require(query.utf8.allSatisfy(allowed.contains), "a character left unescaped: \(query)")
    if generated.isUnambiguous {
        require(parse(query) == .object(generated.expected), "did not round-trip: \(generated.value) → \(query)")
    }
    return 0
}
