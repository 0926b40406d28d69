import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A redirect a transport would not follow: from HTTPS to plain HTTP, unless allowed.
/// Leash delivers it as ``LeashError/transport(_:)``.
public struct RedirectRefused: Error, CustomStringConvertible, Sendable {
    /// The URL that answered with the redirect.
    public let from: URL
    /// Where it pointed.
    public let to: URL

    /// What was refused and why, with secrets in the URLs masked.
    public var description: String {
        "refused to follow a redirect from \(Redactor.default.redact(url: from.absoluteString)) to "
            + "\(Redactor.default.redact(url: to.absoluteString)): it would leave HTTPS for plain HTTP. "
            + "Fix the server, or allow such redirects on the transport"
    }
}

/// What both transports do when they follow a redirect, so they behave alike:
/// - HTTPS → HTTP is refused unless allowed;
/// - a redirect to another origin (scheme, host or port) drops `Authorization`,
///   `Proxy-Authorization` and `Cookie`, as OkHttp and browsers do: credentials meant for one
///   server never reach another.
package enum RedirectRule {
    /// The headers a redirect to another origin drops.
    package static let credentialHeaders = ["Authorization", "Proxy-Authorization", "Cookie"]

    /// The request to send for a redirect from `source` to `next.url`.
    ///
    /// - Throws: ``RedirectRefused`` for HTTPS → HTTP when `allowsDowngrade` is `false`.
    package static func follow(_ next: URLRequest, from source: URL, allowsDowngrade: Bool) throws -> URLRequest {
        guard let target = next.url,
            try !keepsCredentials(from: source, to: target, allowsDowngrade: allowsDowngrade)
        else { return next }
        var request = next
        for name in credentialHeaders {
            request.setValue(nil, forHTTPHeaderField: name)
        }
        return request
    }

    /// Whether a redirect from `source` to `target` keeps the credential headers: only to the
    /// same origin.
    ///
    /// - Throws: ``RedirectRefused`` for HTTPS → HTTP when `allowsDowngrade` is `false`.
    package static func keepsCredentials(from source: URL, to target: URL, allowsDowngrade: Bool) throws -> Bool {
        if !allowsDowngrade, source.scheme?.lowercased() == "https", target.scheme?.lowercased() == "http" {
            throw RedirectRefused(from: source, to: target)
        }
        return isSameOrigin(source, target)
    }

    /// Whether two URLs share scheme, host and port (default ports filled in).
    package static func isSameOrigin(_ first: URL, _ second: URL) -> Bool {
        func origin(_ url: URL) -> (String, String, Int?) {
            let scheme = url.scheme?.lowercased() ?? ""
            let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil)
            return (scheme, url.host?.lowercased() ?? "", port)
        }
        return origin(first) == origin(second)
    }
}
