/// One request of an API, usually a case of an enum with one enum per resource.
///
/// ```swift
/// enum UsersEndpoint: Endpoint {
///     case list(page: Int)
///     case read(id: Int)
///     case create(NewUser)
///
///     var path: String {
///         switch self {
///         case .list: "users"
///         case .read(let id): "users/\(id)"
///         case .create: "users"
///         }
///     }
///
///     var method: HTTPMethod {
///         switch self {
///         case .list, .read: .get
///         case .create: .post
///         }
///     }
///
///     var parameters: Any? {
///         switch self {
///         case .list(let page): ["page": page]
///         case .read: nil
///         case .create(let user): user
///         }
///     }
/// }
/// ```
///
/// How ``parameters`` is encoded depends on its type and the method; see
/// <doc:DefiningEndpoints>. Nothing is ever dropped silently: a value that cannot be sent with
/// the method makes the call fail with ``LeashError/encoding(_:)``.
public protocol Endpoint: Sendable {
    /// The path appended to the manager's base URL, with one `/` between them.
    ///
    /// A leading `/` is optional. The path may carry its own query (`"search?sort=asc"`);
    /// encoded query parameters are appended after it.
    var path: String { get }

    /// The HTTP method.
    var method: HTTPMethod { get }

    /// The parameters, encoded by type: see <doc:DefiningEndpoints>. `nil` by default.
    var parameters: Any? { get }

    /// Headers for this endpoint. They override the manager's headers and are overridden by
    /// the authenticator's. Empty by default.
    var headers: [String: String] { get }
}

extension Endpoint {
    /// No parameters.
    public var parameters: Any? { nil }

    /// No headers.
    public var headers: [String: String] { [:] }
}
