import Foundation
import Leash

/// HTTP Basic authentication: `Authorization: Basic base64(user:password)`.
///
/// ```swift
/// let manager = try Manager.Builder().url(base)
///     .authenticator(BasicAuthenticator(user: "ada", password: secret))
///     .build()
/// ```
///
/// It answers with the header up front, so a server's `WWW-Authenticate: Basic` challenge
/// never needs to be answered.
public struct BasicAuthenticator: Authenticator {
    /// `Authorization`.
    public static let header = "Authorization"

    /// `Basic <credentials>`.
    public let authentication: String?

    /// Creates an authenticator for `user` and `password`.
    ///
    /// - Parameters:
    ///   - user: The user name; it must not contain `:`.
    ///   - password: The password.
    public init(user: String, password: String) {
        authentication = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }
}

/// A fixed token in the `Authorization` header, as `Bearer <token>` or in the
/// `Token token="<token>"` form that Rails APIs (and Faraday's `token_auth`) use.
///
/// ```swift
/// .authenticator(StaticTokenAuthenticator(token: apiKey, style: .tokenAuth))
/// ```
public struct StaticTokenAuthenticator: Authenticator {
    /// How the token is written in the header.
    public enum Style: Sendable {
        /// `Bearer <token>`.
        case bearer
        /// `Token token="<token>"`.
        case tokenAuth
    }

    /// `Authorization`.
    public static let header = "Authorization"

    /// The header value.
    public let authentication: String?

    /// Creates an authenticator for a fixed token.
    ///
    /// - Parameters:
    ///   - token: The token.
    ///   - style: How the token is written; `.bearer` by default.
    public init(token: String, style: Style = .bearer) {
        switch style {
        case .bearer:
            authentication = "Bearer \(token)"
        case .tokenAuth:
            let escaped = token.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
                of: "\"", with: "\\\"")
            authentication = "Token token=\"\(escaped)\""
        }
    }
}
