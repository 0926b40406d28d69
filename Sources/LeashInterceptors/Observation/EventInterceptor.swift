import Foundation
import Leash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Something that happened to a call, for activity indicators and metrics.
public enum RequestEvent: Sendable {
    /// An attempt started. `attempt` is 0 for the first.
    case started(call: UUID, request: URLRequest, attempt: Int)
    /// An attempt failed and is being retried; `attempt` is the new attempt's number.
    case retried(call: UUID, request: URLRequest, attempt: Int)
    /// The call ended with a value; `status` is the HTTP status when the value came from one.
    case finished(call: UUID, request: URLRequest, status: Int?, duration: Duration)
    /// The call ended with an error.
    case failed(call: UUID, request: URLRequest, error: any Error, duration: Duration)

    /// The call the event belongs to; the same for every event of one call.
    public var call: UUID {
        switch self {
        case .started(let call, _, _), .retried(let call, _, _), .finished(let call, _, _, _),
            .failed(let call, _, _, _):
            call
        }
    }
}

/// Reports ``RequestEvent``s for every call: to a closure, or as an `AsyncStream`.
///
/// ```swift
/// let (events, stream) = EventInterceptor.makeStream()
/// let manager = try Manager.Builder().url(base).add(interceptor: events).build()
/// Task {
///     for await event in stream {
///         if case .finished(_, let request, let status, let duration) = event { metrics.record(…) }
///     }
/// }
/// ```
///
/// Add it first, so that its `started` comes before other interceptors act. `finished` and
/// `failed` report the duration from the start of the call's first attempt.
public struct EventInterceptor: ExecutionInterceptor, CompletionInterceptor {
    private let handler: @Sendable (RequestEvent) -> Void

    private enum CallStart: CallContextKey {
        typealias Value = (id: UUID, startedAt: ContinuousClock.Instant)
    }

    /// Creates an interceptor that hands every event to `handler`.
    ///
    /// - Parameter handler: Receives each event, on whatever thread the call is on.
    public init(_ handler: @escaping @Sendable (RequestEvent) -> Void) {
        self.handler = handler
    }

    /// An interceptor and the stream of its events. The stream never finishes by itself.
    ///
    /// - Returns: The interceptor to register and the stream to read.
    public static func makeStream() -> (EventInterceptor, AsyncStream<RequestEvent>) {
        let (stream, continuation) = AsyncStream.makeStream(of: RequestEvent.self)
        return (EventInterceptor { continuation.yield($0) }, stream)
    }

    /// Reports `started`, or `retried` for a later attempt.
    ///
    /// - Parameter chain: The chain of this attempt.
    public func intercept(chain: InterceptorChain<Data>) async {
        let start = chain.context[CallStart.self] ?? (UUID(), chain.startedAt)
        chain.context[CallStart.self] = start
        if chain.attempt > 0 {
            handler(.retried(call: start.id, request: chain.request, attempt: chain.attempt))
        }
        handler(.started(call: start.id, request: chain.request, attempt: chain.attempt))
    }

    /// Reports `finished` or `failed`.
    ///
    /// - Parameters:
    ///   - chain: The chain of this attempt.
    ///   - response: The result.
    public func intercept(chain: InterceptorChain<Data>, response: Response<Data>) async {
        let start = chain.context[CallStart.self] ?? (UUID(), chain.startedAt)
        let duration = ContinuousClock.now - start.startedAt
        switch response {
        case .success(_, let extra):
            let status = (extra as? HTTPURLResponse)?.statusCode
            handler(.finished(call: start.id, request: chain.request, status: status, duration: duration))
        case .failure(let error):
            handler(.failed(call: start.id, request: chain.request, error: error, duration: duration))
        }
    }
}
