/// Supplies the credential header of every request.
///
/// ```swift
/// actor TokenStore: Authenticator {
///     static let header = "Authorization"
///     var token: String?
///     var authentication: String? { token.map { "Bearer \($0)" } }
/// }
/// ```
///
/// The value is read anew for every attempt, so a retry after a token refresh carries the
/// new token. It takes precedence over the manager's and the endpoint's headers.
public protocol Authenticator: Sendable {
    /// The name of the header the credential goes in, such as `Authorization`.
    static var header: String { get }

    /// The header value, or `nil` to send no credential.
    var authentication: String? { get async }
}
