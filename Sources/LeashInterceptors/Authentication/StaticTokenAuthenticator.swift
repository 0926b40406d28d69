import Foundation
import Leash

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
            let escaped = token.replacingScalars("\\", with: "\\\\").replacingScalars("\"", with: "\\\"")
            authentication = "Token token=\"\(escaped)\""
        }
    }
}
