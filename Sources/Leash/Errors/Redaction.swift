import Foundation

/// Hides credentials in text that Leash shows: error descriptions and debug output.
enum Redaction {
    /// Name fragments that mark a header, query item or JSON member as secret.
    static let secretFragments = [
        "token", "password", "passwd", "secret", "api_key", "apikey", "api-key", "authorization", "cookie",
    ]

    /// The replacement for a secret value.
    static let mask = "***"

    /// Whether a header, query item or member name looks like it carries a credential.
    static func isSecret(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return secretFragments.contains { lowered.contains($0) }
    }

    /// The URL with the values of secret query items replaced by `***`.
    static func url(_ url: String) -> String {
        guard let queryStart = url.firstIndex(of: "?") else { return url }
        let fragmentStart = url[queryStart...].firstIndex(of: "#") ?? url.endIndex
        let query = url[url.index(after: queryStart)..<fragmentStart]
        let items = query.split(separator: "&", omittingEmptySubsequences: false).map { item -> String in
            guard let equals = item.firstIndex(of: "=") else { return String(item) }
            let name = String(item[..<equals])
            let decoded = name.removingPercentEncoding ?? name
            return isSecret(decoded) ? name + "=" + mask : String(item)
        }
        return url[...queryStart] + items.joined(separator: "&") + url[fragmentStart...]
    }

    /// Free text with `name=value` and `name: value` pairs whose names are secret masked, and
    /// every URL in it redacted.
    static func text(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.count)
        var index = text.startIndex
        while index < text.endIndex {
            // Look for a secret name followed by "=" or ":" and mask the value after it.
            if let valueStart = secretValueStart(in: text, at: index) {
                result += text[index..<valueStart]
                result += mask
                index = valueEnd(in: text, from: valueStart)
            } else {
                result.append(text[index])
                index = text.index(after: index)
            }
        }
        return result
    }

    private static func secretValueStart(in text: String, at index: String.Index) -> String.Index? {
        // Only start at a word boundary.
        if index > text.startIndex {
            let previous = text[text.index(before: index)]
            if previous.isLetter || previous.isNumber || previous == "_" || previous == "-" { return nil }
        }
        var end = index
        while end < text.endIndex, text[end].isLetter || text[end].isNumber || text[end] == "_" || text[end] == "-" {
            end = text.index(after: end)
        }
        guard end > index, isSecret(String(text[index..<end])) else { return nil }
        var cursor = end
        // Allow a closing quote after a JSON member name, then spaces.
        if cursor < text.endIndex, text[cursor] == "\"" { cursor = text.index(after: cursor) }
        while cursor < text.endIndex, text[cursor] == " " { cursor = text.index(after: cursor) }
        guard cursor < text.endIndex, text[cursor] == "=" || text[cursor] == ":" else { return nil }
        cursor = text.index(after: cursor)
        while cursor < text.endIndex, text[cursor] == " " || text[cursor] == "\"" {
            cursor = text.index(after: cursor)
        }
        return cursor
    }

    private static func valueEnd(in text: String, from start: String.Index) -> String.Index {
        var cursor = start
        let stops: Set<Character> = ["&", "\"", ",", "\n", "\r", ")", "}", "]", ";"]
        while cursor < text.endIndex, !stops.contains(text[cursor]) {
            cursor = text.index(after: cursor)
        }
        return cursor
    }
}
