import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where requests go and what handles them: the base URL, headers, authenticator,
/// interceptors, coders, status validation and transport.
///
/// Build one with ``Builder`` and share it; a `Manager` is immutable and `Sendable`.
///
/// ```swift
/// let manager = try Manager.Builder()
///     .url("https://api.example.com/v1")
///     .authenticator(tokens)
///     .add(interceptor: LoggerInterceptor())
///     .build()
/// ```
public final class Manager: Sendable {
    /// The base URL every endpoint's path is appended to.
    public let baseURL: URL
    /// Headers sent with every request; endpoint headers override them.
    public let headers: [String: String]
    /// Supplies the credential header, read anew for every attempt.
    public let authenticator: (any Authenticator)?
    /// Every interceptor, in the order added.
    public let interceptors: [any Interceptor]
    /// The timeout of one attempt, in seconds.
    public let timeout: TimeInterval
    /// Encodes `Encodable` parameters as JSON bodies.
    public let jsonEncoder: JSONEncoder
    /// Decodes JSON responses of typed calls.
    public let jsonDecoder: JSONDecoder
    /// Statuses that go to the Success phase; others go to Failure as
    /// ``LeashError/unacceptableStatusCode(_:response:data:)``. `nil` sends every status to
    /// Success.
    public let acceptableStatusCodes: Range<Int>?
    /// How many times interceptors may retry one call.
    public let maxRetries: Int
    /// What sends the requests.
    public let transport: any Transport

    /// The base URL as text without a trailing `/`, ready to have paths appended.
    let baseURLString: String
    /// The interceptors sorted by phase once, so calls do not sort them again.
    let pipeline: Pipeline

    init(builder: Builder, baseURL: URL) {
        self.baseURL = baseURL
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURLString = base
        self.headers = builder.headers
        self.authenticator = builder.authenticator
        self.interceptors = builder.interceptors
        self.timeout = builder.timeout
        let encoder = JSONEncoder()
        builder.jsonEncoderConfiguration?(encoder)
        self.jsonEncoder = encoder
        let decoder = JSONDecoder()
        builder.jsonDecoderConfiguration?(decoder)
        self.jsonDecoder = decoder
        self.acceptableStatusCodes = builder.acceptableStatusCodes
        self.maxRetries = builder.maxRetries
        self.transport = builder.transport ?? URLSessionTransport()
        self.pipeline = Pipeline(interceptors: builder.interceptors)
    }
}

/// The interceptors of a manager, split by phase.
struct Pipeline: Sendable {
    let execution: [any ExecutionInterceptor]
    let success: [any SuccessInterceptor]
    let failure: [any FailureInterceptor]
    let completion: [any CompletionInterceptor]
    let serialization: [any SerializationInterceptor]

    init(interceptors: [any Interceptor]) {
        execution = interceptors.compactMap { $0 as? any ExecutionInterceptor }
        success = interceptors.compactMap { $0 as? any SuccessInterceptor }
        failure = interceptors.compactMap { $0 as? any FailureInterceptor }
        completion = interceptors.compactMap { $0 as? any CompletionInterceptor }
        serialization = interceptors.compactMap { $0 as? any SerializationInterceptor }
    }
}
