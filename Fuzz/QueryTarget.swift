import Foundation

// libFuzzer target for the query encoder: random nested parameters (strings, numbers, NaN
// and infinities, Booleans, arrays, dictionaries, any UTF-8 keys) must encode to a string of
// unreserved characters and escapes, throw only for non-finite numbers, and, where bracket
// notation is unambiguous, parse back to what went in.

/// What the encoder should give back after parsing.
indirect enum Expected: Equatable {
    case text(String)
    case list([String])
    case object([String: Expected])
}

struct Generated {
    var value: [String: Any] = [:]
    var expected: [String: Expected] = [:]
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
            result.expected[key] = .text(text)
        case 1:
            let number = Int(Int8(bitPattern: input.byte()))
            result.value[key] = number
            result.expected[key] = .text(String(number))
        case 2:
            let number = input.double()
            result.value[key] = number
            result.expected[key] = .text(number.description)
        case 3:
            let flag = input.byte() % 2 == 0
            result.value[key] = flag
            result.expected[key] = .text(flag ? "true" : "false")
        case 4:
            let items = (0..<Int(input.byte() % 4)).map { _ in input.string() }
            if items.isEmpty { result.isUnambiguous = false }
            result.value[key] = items
            result.expected[key] = .list(items)
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

/// Parses `a[b][]=c` pairs the way Rails and PHP do.
func parse(_ query: String) -> [String: Expected] {
    var root: [String: Expected] = [:]
    guard !query.isEmpty else { return root }
    for pair in query.split(separator: "&", omittingEmptySubsequences: false) {
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        require(parts.count == 2, "a pair without '=': \(pair)")
        guard let name = String(parts[0]).removingPercentEncoding,
            let value = String(parts[1]).removingPercentEncoding
        else {
            fatalError("an escape that does not decode: \(pair)")
        }
        insert(value, at: bracketPath(name)[...], into: &root)
    }
    return root
}

func insert(_ value: String, at path: ArraySlice<String>, into object: inout [String: Expected]) {
    let key = path.first!
    let rest = path.dropFirst()
    if rest.isEmpty {
        object[key] = .text(value)
    } else if rest.count == 1, rest.first == "" {
        if case .list(let items) = object[key] {
            object[key] = .list(items + [value])
        } else {
            object[key] = .list([value])
        }
    } else {
        var inner: [String: Expected] = [:]
        if case .object(let existing) = object[key] { inner = existing }
        insert(value, at: rest, into: &inner)
        object[key] = .object(inner)
    }
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
        require(parse(query) == generated.expected, "did not round-trip: \(generated.value) → \(query)")
    }
    return 0
}

/// `a[b][]` → `["a", "b", ""]`, read byte by byte as a server does (a `[` followed by a
/// combining mark is one `Character` in Swift, but still a bracket on the wire).
func bracketPath(_ name: String) -> [String] {
    let bytes = Array(name.utf8)
    guard let open = bytes.firstIndex(of: UInt8(ascii: "[")) else { return [name] }
    var path = [String(decoding: bytes[..<open], as: UTF8.self)]
    var index = open
    while index < bytes.count, bytes[index] == UInt8(ascii: "["),
        let close = bytes[index...].firstIndex(of: UInt8(ascii: "]"))
    {
        path.append(String(decoding: bytes[(index + 1)..<close], as: UTF8.self))
        index = close + 1
    }
    return path
}
