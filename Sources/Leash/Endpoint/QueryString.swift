import Foundation

/// Writes query parameters as an RFC 3986 query string.
///
/// Keys are sorted; arrays become `key[]=value`, dictionaries `key[sub]=value`, `Bool`
/// `true`/`false`, `Date` ISO 8601 in UTC. Everything but the unreserved characters
/// (`A–Z a–z 0–9 - . _ ~`) is percent-encoded, so a space is `%20`, `+` is `%2B` and the
/// brackets are `%5B%5D` (Foundation's `URL` does not accept them raw).
enum QueryString {
    static func encode(_ parameters: [String: Any]) throws -> String {
        var pairs: [String] = []
        for key in parameters.keys.sorted() {
            try append(parameters[key]!, key: key, to: &pairs)
        }
        return pairs.joined(separator: "&")
    }

    private static func append(_ value: Any, key: String, to pairs: inout [String]) throws {
        switch value {
        case let bool as Bool:
            pairs.append(escape(key) + "=" + (bool ? "true" : "false"))
        case let string as String:
            pairs.append(escape(key) + "=" + escape(string))
        case let date as Date:
            pairs.append(escape(key) + "=" + escape(date.formatted(.iso8601)))
        case let number as Double:
            try pairs.append(escape(key) + "=" + escape(finite(number, key: key)))
        case let number as Float:
            try pairs.append(escape(key) + "=" + escape(finite(Double(number), key: key)))
        case let dictionary as [String: Any]:
            for subkey in dictionary.keys.sorted() {
                try append(dictionary[subkey]!, key: key + "[" + subkey + "]", to: &pairs)
            }
        case let array as [Any]:
            for element in array {
                try append(element, key: key + "[]", to: &pairs)
            }
        case let convertible as any CustomStringConvertible:
            pairs.append(escape(key) + "=" + escape(convertible.description))
        default:
            throw EncodingError.invalidValue(
                value,
                .init(codingPath: [], debugDescription: "The query value for '\(key)' is not CustomStringConvertible.")
            )
        }
    }

    private static func finite(_ number: Double, key: String) throws -> String {
        guard number.isFinite else {
            throw EncodingError.invalidValue(
                number,
                .init(codingPath: [], debugDescription: "The query value for '\(key)' is not a finite number.")
            )
        }
        return number.description
    }

    /// The RFC 3986 unreserved characters: the only ones left as they are.
    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
    )

    static func escape(_ text: String) -> String {
        // Fast path: most keys and values need no escaping.
        if text.utf8.allSatisfy({ isUnreserved($0) }) { return text }
        return text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}
