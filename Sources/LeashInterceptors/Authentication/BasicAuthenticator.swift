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
