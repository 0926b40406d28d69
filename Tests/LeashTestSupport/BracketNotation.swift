import Foundation

// Foundation only: the query fuzzer (Fuzz/run) compiles this file too.

/// A parameter value as a server reads it back from bracket notation (`a[b][]=c`): text, a
/// list of texts, or nested members.
package indirect enum FormValue: Equatable, Sendable, CustomStringConvertible {
    case string(String)
    case array([String])
    case object([String: FormValue])

    package var description: String {
        switch self {
        case .string(let text): return text.debugDescription
        case .array(let items): return items.description
        case .object(let members): return members.description
        }
    }

    /// Rebuilds nested parameters from decoded `a[b][]=c` pairs, as Rails and PHP read them.
    package static func parse(pairs: [(name: String, value: String)]) -> FormValue {
        var root: [String: FormValue] = [:]
        for (name, value) in pairs {
            insert(value, at: bracketPath(name)[...], into: &root)
        }
        return .object(root)
    }

    private static func insert(_ value: String, at path: ArraySlice<String>, into object: inout [String: FormValue]) {
        let key = path.first!
        let rest = path.dropFirst()
        if rest.isEmpty {
            object[key] = .string(value)
        } else if rest.count == 1, rest.first == "" {
            if case .array(let items) = object[key] {
                object[key] = .array(items + [value])
            } else {
                object[key] = .array([value])
            }
        } else {
            var inner: [String: FormValue] = [:]
            if case .object(let existing) = object[key] { inner = existing }
            insert(value, at: rest, into: &inner)
            object[key] = .object(inner)
        }
    }

    /// `a[b][]` → `["a", "b", ""]`, read byte by byte as a server does (a `[` followed by a
    /// combining mark is one `Character` in Swift, but still a bracket on the wire).
    package static func bracketPath(_ name: String) -> [String] {
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
}
