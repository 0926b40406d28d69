/// A path pattern with wildcards: `*` matches one segment, `**` any number of segments.
///
/// Patterns are matched against the path relative to the manager's base URL, without a
/// leading `/`: with the base `https://api.test/v1`, `users/*` matches `/v1/users/7` but not
/// `/v1/users/7/posts`, and `users/**` matches both.
public struct PathPattern: Sendable, Hashable, ExpressibleByStringLiteral {
    /// The pattern's segments.
    public let segments: [Substring]

    /// Creates a pattern, such as `users/*/posts`.
    ///
    /// - Parameter pattern: The pattern; a leading or trailing `/` is ignored.
    public init(_ pattern: String) {
        segments = pattern.split(separator: "/")
    }

    /// Creates a pattern from a literal.
    ///
    /// - Parameter value: The pattern.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// Whether `path` matches the pattern.
    ///
    /// - Parameter path: A path relative to the base URL.
    /// - Returns: `true` when it matches.
    public func matches(_ path: String) -> Bool {
        Self.match(segments[...], path.split(separator: "/")[...])
    }

    private static func match(_ pattern: ArraySlice<Substring>, _ path: ArraySlice<Substring>) -> Bool {
        guard let first = pattern.first else { return path.isEmpty }
        if first == "**" {
            let rest = pattern.dropFirst()
            return (path.startIndex...path.endIndex).contains { match(rest, path[$0...]) }
        }
        guard let segment = path.first, first == "*" || first == segment else { return false }
        return match(pattern.dropFirst(), path.dropFirst())
    }
}
