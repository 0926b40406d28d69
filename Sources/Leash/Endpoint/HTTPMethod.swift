/// An HTTP request method.
///
/// The common verbs are static members; any other verb is `HTTPMethod("PURGE")`.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The verb as it is sent on the wire, such as `GET`.
    public let rawValue: String

    /// Creates a method from its verb, such as `"PURGE"`.
    ///
    /// - Parameter rawValue: The verb. Leash sends it as given.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Creates a method from its verb, such as `HTTPMethod("PURGE")`.
    ///
    /// - Parameter rawValue: The verb. Leash sends it as given.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// The verb, such as `GET`.
    public var description: String { rawValue }

    /// `GET`.
    public static let get = HTTPMethod("GET")
    /// `POST`.
    public static let post = HTTPMethod("POST")
    /// `PUT`.
    public static let put = HTTPMethod("PUT")
    /// `PATCH`.
    public static let patch = HTTPMethod("PATCH")
    /// `DELETE`.
    public static let delete = HTTPMethod("DELETE")
    /// `HEAD`.
    public static let head = HTTPMethod("HEAD")
    /// `OPTIONS`.
    public static let options = HTTPMethod("OPTIONS")

    /// Whether parameters that could go either way are sent in the query string rather than
    /// the body: true for `GET`, `HEAD` and `DELETE`.
    var encodesParametersInQuery: Bool {
        self == .get || self == .head || self == .delete
    }
}
