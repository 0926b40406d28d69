import Foundation
import Leash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Adds headers to every request: fixed ones, a `User-Agent`, and a request id.
///
/// ```swift
/// .add(interceptor: HeadersInterceptor(headers: ["Accept-Language": "en"],
///                                      userAgent: "MyApp/2.1", requestIDHeader: "X-Request-ID"))
/// ```
///
/// Headers the request already has (from the manager, the endpoint or the authenticator) are
/// kept. The request id is a new UUID per call, the same on every retry of the call, so the
/// server can tell a retry from a new call.
public struct HeadersInterceptor: ExecutionInterceptor {
    /// Headers added when the request lacks them.
    public let headers: [String: String]
    /// The header that carries the request id, or `nil` for none.
    public let requestIDHeader: String?

    private enum RequestID: CallContextKey {
        typealias Value = String
    }

    /// Creates the interceptor.
    ///
    /// - Parameters:
    ///   - headers: Headers added when the request lacks them.
    ///   - userAgent: A `User-Agent` added when the request lacks one.
    ///   - requestIDHeader: The header for a per-call UUID, such as `X-Request-ID`; `nil` for none.
    public init(headers: [String: String] = [:], userAgent: String? = nil, requestIDHeader: String? = nil) {
        var headers = headers
        if let userAgent { headers["User-Agent"] = userAgent }
        self.headers = headers
        self.requestIDHeader = requestIDHeader
    }

    /// Adds the headers the request lacks.
    ///
    /// - Parameter chain: The chain of this attempt.
    public func intercept(chain: InterceptorChain<Data>) async {
        var request = chain.request
        for (name, value) in headers where request.value(forHTTPHeaderField: name) == nil {
            request.setValue(value, forHTTPHeaderField: name)
        }
        if let requestIDHeader, request.value(forHTTPHeaderField: requestIDHeader) == nil {
            let id = chain.context[RequestID.self] ?? UUID().uuidString
            chain.context[RequestID.self] = id
            request.setValue(id, forHTTPHeaderField: requestIDHeader)
        }
        chain.proceed(with: request)
    }
}
