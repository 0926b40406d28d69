import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Something that acts on calls; conform to one or more of the five phase protocols.
///
/// Register interceptors with `Manager.Builder.add(interceptor:)`. Within a phase they run in
/// the order they were added; an object that conforms to several phase protocols runs in
/// each of them. Every `intercept` method gets an ``InterceptorChain`` and decides with
/// ``InterceptorChain/proceed()``, a `complete` method or ``InterceptorChain/retry()``;
/// returning without deciding is the same as proceeding.
///
/// One attempt runs: build the request → ``ExecutionInterceptor`` → transport →
/// ``SuccessInterceptor`` or ``FailureInterceptor`` → ``CompletionInterceptor`` →
/// (typed calls) serializer → ``SerializationInterceptor``.
public protocol Interceptor: Sendable {}

/// Runs before the request is sent; may answer it without the network.
///
/// ```swift
/// struct OfflineGuard: ExecutionInterceptor {
///     let isOnline: @Sendable () -> Bool
///
///     func intercept(chain: InterceptorChain<Data>) async {
///         if !isOnline() { chain.complete(with: URLError(.notConnectedToInternet)) }
///     }
/// }
/// ```
///
/// `complete` here skips the network and the remaining Execution interceptors; the result
/// goes to the Completion phase.
public protocol ExecutionInterceptor: Interceptor {
    /// Acts on the request in `chain.request` before it is sent.
    ///
    /// - Parameter chain: The chain of this attempt.
    func intercept(chain: InterceptorChain<Data>) async
}

/// Runs when the attempt failed: a transport error, a timeout, or a status outside the
/// manager's `acceptableStatusCodes` (``LeashError/unacceptableStatusCode(_:response:data:)``).
public protocol FailureInterceptor: Interceptor {
    /// Acts on a failed attempt: proceed with the error, replace it, or retry.
    ///
    /// - Parameters:
    ///   - chain: The chain of this attempt.
    ///   - error: What went wrong.
    func intercept(chain: InterceptorChain<Data>, error: any Error) async
}

/// Runs when the server answered with an acceptable status.
public protocol SuccessInterceptor: Interceptor {
    /// Acts on a successful attempt: proceed, replace the result (for instance with an error
    /// found in the body), or retry.
    ///
    /// - Parameters:
    ///   - chain: The chain of this attempt.
    ///   - response: The response head.
    ///   - data: The response body.
    func intercept(chain: InterceptorChain<Data>, response: HTTPURLResponse, data: Data) async
}

/// Runs on the attempt's result, whatever produced it, before it is serialized and delivered.
///
/// An attempt that was retried from an earlier phase does not reach Completion: an
/// interceptor that must see every attempt also conforms to ``FailureInterceptor``.
public protocol CompletionInterceptor: Interceptor {
    /// Acts on the attempt's result: proceed, replace it, or retry.
    ///
    /// - Parameters:
    ///   - chain: The chain of this attempt.
    ///   - response: The result so far.
    func intercept(chain: InterceptorChain<Data>, response: Response<Data>) async
}

/// Runs on typed calls after the serializer, on successes and failures alike.
///
/// ``InterceptorChain/retry()`` is not available here: it counts as proceeding.
public protocol SerializationInterceptor: Interceptor {
    /// Acts on the serialized result: proceed or replace it.
    ///
    /// - Parameters:
    ///   - chain: The chain of this attempt, typed by the serializer's value.
    ///   - response: The raw result the serializer was given.
    ///   - result: What the serializer (or an earlier Serialization interceptor) produced.
    ///   - serializer: The serializer of this call.
    func intercept<S: Serializer>(
        chain: InterceptorChain<S.Value>,
        response: Response<Data>,
        result: Result<S.Value, any Error>,
        serializer: S
    ) async
}
