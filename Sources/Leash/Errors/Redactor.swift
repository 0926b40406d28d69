import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Hides credentials in text that people read: error descriptions, logs, cURL commands.
///
/// A header is secret when its name is in ``secretHeaders`` or looks like a credential; a
/// query item, JSON member or `name=value` pair is secret when its name contains one of
/// ``secretNames`` (case-insensitively). Secret values become ``mask``.
///
/// ```swift
/// var redactor = Redactor.default
/// redactor.secretNames.append("pin")
/// redactor.redact(url: "https://api.test/login?pin=1234&page=2")
/// // https://api.test/login?pin=***&page=2
/// ```
public struct Redactor: Sendable {
    /// Header names whose values are always hidden, compared case-insensitively.
    public var secretHeaders: Set<String>
    /// Name fragments that mark a header, query item, JSON member or pair as secret.
    public var secretNames: [String]
    /// What a secret value is replaced with.
    public var mask: String

    /// Creates a redactor.
    ///
    /// - Parameters:
    ///   - secretHeaders: Header names whose values are always hidden.
    ///   - secretNames: Name fragments that mark a value as secret.
    ///   - mask: The replacement for a secret value.
    public init(
        secretHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"],
        secretNames: [String] = [
            "token", "password", "passwd", "secret", "api_key", "apikey", "api-key", "authorization", "cookie",
        ],
        mask: String = "***"
    ) {
        self.secretHeaders = Set(secretHeaders.map { $0.lowercased() })
        self.secretNames = secretNames.map { $0.lowercased() }
        self.mask = mask
    }

    /// The redactor Leash uses unless told otherwise.
    public static let `default` = Redactor()

    /// Whether a query item, JSON member or pair with this name holds a secret.
    ///
    /// - Parameter name: The name.
    /// - Returns: `true` when the name contains one of ``secretNames``.
    public func isSecret(name: String) -> Bool {
        let lowered = name.lowercased()
        return secretNames.contains { lowered.contains($0) }
    }

    /// Whether a header with this name holds a secret.
    ///
    /// - Parameter header: The header name.
    /// - Returns: `true` when it is one of ``secretHeaders`` or its name looks secret.
    public func isSecret(header: String) -> Bool {
        secretHeaders.contains(header.lowercased()) || isSecret(name: header)
    }

    /// The headers with secret values replaced by ``mask``.
    ///
    /// - Parameter headers: The headers.
    /// - Returns: The redacted headers.
    public func redact(headers: [String: String]) -> [String: String] {
        headers.reduce(into: [:]) { result, header in
            result[header.key] = isSecret(header: header.key) ? mask : header.value
        }
    }

    /// The URL with the values of secret query items replaced by ``mask``.
    ///
    /// - Parameter url: The URL as text.
    /// - Returns: The redacted URL.
    public func redact(url: String) -> String {
        guard let queryStart = url.firstIndex(of: "?") else { return url }
        let fragmentStart = url[queryStart...].firstIndex(of: "#") ?? url.endIndex
        let query = url[url.index(after: queryStart)..<fragmentStart]
        let items = query.split(separator: "&", omittingEmptySubsequences: false).map { item -> String in
            guard let equals = item.firstIndex(of: "=") else { return String(item) }
            let name = String(item[..<equals])
            return isSecret(name: name.removingPercentEncoding ?? name) ? name + "=" + mask : String(item)
        }
        return url[...queryStart] + items.joined(separator: "&") + url[fragmentStart...]
    }

    /// Free text with secrets hidden: every one of `values` wherever it appears, and the value
    /// of every `name=value`, `name: value` or JSON `"name": value` whose name is secret.
    ///
    /// - Parameters:
    ///   - text: The text, such as a body or an error description.
    ///   - values: Secret values to hide wherever they appear, such as the request's token.
    /// - Returns: The redacted text.
    public func redact(text: String, values: [String] = []) -> String {
        var text = text
        // Longest first, so that "Bearer abc" is hidden whole before "abc".
        for value in values.sorted(by: { $0.count > $1.count }) where value.count >= 3 {
            // Scalar by scalar: a secret followed by a combining mark in the text is not a whole
            // `Character` match, but its bytes are all there.
            text = text.replacingScalars(value, with: mask)
        }
        return redactPairs(in: text)
    }

    /// The secret values a request carries: the values of its secret headers (and the
    /// credential after an auth scheme such as `Bearer`), cookie values, secret query items,
    /// and the values of secret JSON members and `name=value` pairs in its body.
    ///
    /// - Parameter request: The request.
    /// - Returns: The values, to pass to ``redact(text:values:)``.
    public func secretValues(of request: URLRequest) -> [String] {
        var values: [String] = []
        for (name, value) in request.allHTTPHeaderFields ?? [:] where isSecret(header: name) {
            values.append(value)
            // By scalar: a space followed by a combining mark is one `Character`.
            if let space = value.unicodeScalars.firstIndex(of: " ") {
                values.append(String(value.unicodeScalars[value.unicodeScalars.index(after: space)...]))
            }
            if name.lowercased() == "cookie" {
                for pair in value.split(separator: ";") {
                    if let equals = pair.firstIndex(of: "=") {
                        values.append(String(pair[pair.index(after: equals)...]))
                    }
                }
            }
        }
        if let url = request.url, let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems {
            values += items.filter { isSecret(name: $0.name) }.compactMap(\.value)
        }
        if let body = request.httpBody, let text = String(data: body, encoding: .utf8) {
            values += secretPairValues(in: text)
        }
        return values.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    // The pair scanning below walks Unicode scalars, not `Character`s: a quote or `=` followed
    // by a combining mark is one `Character` in Swift, yet still a quote or `=` in the bytes.

    /// The values of every secret pair in `text`.
    private func secretPairValues(in text: String) -> [String] {
        let scalars = text.unicodeScalars
        var values: [String] = []
        var index = scalars.startIndex
        while index < scalars.endIndex {
            if let valueStart = secretValueStart(in: scalars, at: index) {
                let end = valueEnd(in: scalars, from: valueStart)
                let value = String(scalars[valueStart..<end])
                values.append(value.removingPercentEncoding ?? value)
                index = end
            } else {
                index = scalars.index(after: index)
            }
        }
        return values
    }

    private func redactPairs(in text: String) -> String {
        let scalars = text.unicodeScalars
        var result = String.UnicodeScalarView()
        var index = scalars.startIndex
        while index < scalars.endIndex {
            if let valueStart = secretValueStart(in: scalars, at: index) {
                result += scalars[index..<valueStart]
                result += mask.unicodeScalars
                index = valueEnd(in: scalars, from: valueStart)
            } else {
                result.append(scalars[index])
                index = scalars.index(after: index)
            }
        }
        return String(result)
    }

    private static func isNameScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || scalar.properties.numericType != nil || scalar == "_" || scalar == "-"
    }

    /// Where the value starts when a secret name followed by `=` or `:` starts at `index`.
    private func secretValueStart(
        in text: String.UnicodeScalarView, at index: String.UnicodeScalarView.Index
    ) -> String.UnicodeScalarView.Index? {
        if index > text.startIndex, Self.isNameScalar(text[text.index(before: index)]) { return nil }
        var end = index
        while end < text.endIndex, Self.isNameScalar(text[end]) {
            end = text.index(after: end)
        }
        guard end > index, isSecret(name: String(text[index..<end])) else { return nil }
        var cursor = end
        // A JSON member name ends with a quote before the colon.
        if cursor < text.endIndex, text[cursor] == "\"" { cursor = text.index(after: cursor) }
        while cursor < text.endIndex, text[cursor] == " " { cursor = text.index(after: cursor) }
        guard cursor < text.endIndex, text[cursor] == "=" || text[cursor] == ":" else { return nil }
        cursor = text.index(after: cursor)
        while cursor < text.endIndex, text[cursor] == " " || text[cursor] == "\"" {
            cursor = text.index(after: cursor)
        }
        return cursor
    }

    private func valueEnd(
        in text: String.UnicodeScalarView, from start: String.UnicodeScalarView.Index
    ) -> String.UnicodeScalarView.Index {
        let stops: Set<Unicode.Scalar> = ["&", "\"", ",", "\n", "\r", ")", "}", "]", ";"]
        var cursor = start
        while cursor < text.endIndex, !stops.contains(text[cursor]) {
            cursor = text.index(after: cursor)
        }
        return cursor
    }
}
