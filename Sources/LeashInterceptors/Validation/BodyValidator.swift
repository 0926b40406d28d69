import Foundation
import Leash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Turns an API's error body into an error, whatever the status it came with.
///
/// ```swift
/// struct APIErrorBody: Decodable { var code: String; var message: String }
///
/// let manager = try Manager.Builder().url(base)
///     .add(interceptor: BodyValidator<APIErrorBody> { body in APIError(code: body.code) })
///     .build()
/// ```
///
/// In the Success phase it decodes every body as `Body` with the manager's `JSONDecoder`;
/// when that works and `transform` returns an error, the call completes with it. In the
/// Failure phase it does the same with the body of an
/// `LeashError.unacceptableStatusCode(_:response:data:)`, so a 422's body becomes your
/// error instead of a bare status. Bodies that do not decode as `Body` pass untouched.
public struct BodyValidator<Body: Decodable>: SuccessInterceptor, FailureInterceptor {
    /// Makes the error from a decoded body, or returns `nil` to let the body pass.
    public let transform: @Sendable (Body) -> (any Error)?

    /// Creates a validator.
    ///
    /// - Parameter transform: Makes the error from a decoded body, or returns `nil`.
    public init(transform: @escaping @Sendable (Body) -> (any Error)?) {
        self.transform = transform
    }

    /// Completes with the body's error, if it holds one.
    ///
    /// - Parameters:
    ///   - chain: The chain of this attempt.
    ///   - response: The response head.
    ///   - data: The body.
    public func intercept(chain: InterceptorChain<Data>, response: HTTPURLResponse, data: Data) async {
        validate(data, chain)
    }

    /// Completes with the body's error when an unacceptable status carried one.
    ///
    /// - Parameters:
    ///   - chain: The chain of this attempt.
    ///   - error: The failure.
    public func intercept(chain: InterceptorChain<Data>, error: any Error) async {
        guard case LeashError.unacceptableStatusCode(_, _, let data) = error else { return }
        validate(data, chain)
    }

    private func validate(_ data: Data, _ chain: InterceptorChain<Data>) {
        guard !data.isEmpty, let body = try? chain.client.manager.jsonDecoder.decode(Body.self, from: data),
            let error = transform(body)
        else { return }
        chain.complete(with: error)
    }
}
