import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What an interceptor sees of the call, and how it decides what happens next.
///
/// Each interceptor gets its own chain and decides once, with ``proceed()``, one of the
/// `complete` methods, or ``retry()``. The first decision wins; later ones are ignored.
/// Returning from `intercept` without deciding is the same as proceeding, so nothing an
/// interceptor forgets can hang a call.
///
/// - `complete(…, finish: true)` replaces the result and skips the rest of the phase.
/// - `complete(…, finish: false)` delivers that result to the caller (through the remaining
///   Completion and Serialization interceptors) and then carries on as if the interceptor had
///   proceeded, so the caller also receives the next result: cache-then-network.
/// - ``retry()`` starts a new attempt: the request is built again (the authenticator is read
///   again) and Execution runs again.
public final class InterceptorChain<Value: Sendable>: Sendable {
    /// The client that makes the call.
    public let client: Client
    /// The endpoint being called.
    public let endpoint: any Endpoint
    /// This attempt's request, exactly as sent (authenticator header included), or the
    /// partial request (base URL and method) when it could not be built.
    public let request: URLRequest
    /// The attempt number: 0 for the first attempt, one more for each retry.
    public let attempt: Int
    /// When this attempt began; the same in every phase of the attempt.
    public let startedAt: ContinuousClock.Instant
    /// Storage shared by all phases and attempts of this call.
    public let context: CallContext

    let allowsRetry: Bool
    let allowsRequestChange: Bool
    private let decision = Locked<Decision?>(nil)

    enum Decision {
        case proceed
        case proceedWith(URLRequest)
        case complete(Response<Value>, finish: Bool)
        case retry
    }

    init(attempt: Attempt, allowsRetry: Bool, allowsRequestChange: Bool = false) {
        self.client = attempt.call.client
        self.endpoint = attempt.call.endpoint
        self.request = attempt.request
        self.attempt = attempt.number
        self.startedAt = attempt.startedAt
        self.context = attempt.call.context
        self.allowsRetry = allowsRetry
        self.allowsRequestChange = allowsRequestChange
    }

    /// Lets the call go on unchanged.
    public func proceed() {
        decide(.proceed)
    }

    /// Replaces the result with `response`.
    ///
    /// - Parameters:
    ///   - response: The result to use from now on.
    ///   - finish: `false` delivers `response` and then carries on as if this interceptor had
    ///     proceeded.
    public func complete(with response: Response<Value>, finish: Bool = true) {
        decide(.complete(response, finish: finish))
    }

    /// Replaces the result with a value.
    ///
    /// - Parameters:
    ///   - value: The value to deliver.
    ///   - extra: Extra information delivered with it, such as an `HTTPURLResponse`.
    ///   - finish: `false` delivers the value and then carries on as if this interceptor had
    ///     proceeded.
    public func complete(with value: Value, extra: (any Sendable)? = nil, finish: Bool = true) {
        decide(.complete(.success(value: value, extra: extra), finish: finish))
    }

    /// Replaces the result with an error.
    ///
    /// - Parameters:
    ///   - error: The error to deliver.
    ///   - finish: `false` delivers the error and then carries on as if this interceptor had
    ///     proceeded.
    public func complete(with error: any Error, finish: Bool = true) {
        decide(.complete(.failure(error), finish: finish))
    }

    fileprivate func decide(_ newDecision: Decision) {
        decision.withLock { current in
            if current == nil { current = newDecision }
        }
    }

    /// Ends the interceptor's turn: its decision, or `proceed` when it made none.
    func seal() -> Decision {
        decision.withLock { current in
            if current == nil { current = .proceed }
            return current!
        }
    }
}

extension InterceptorChain where Value == Data {
    /// Starts a new attempt of the call.
    ///
    /// The request is built again (parameters re-encoded, the authenticator read again) and
    /// the Execution phase runs again. After the manager's `maxRetries` retries the call ends
    /// with ``LeashError/retryLimitExceeded(attempts:)``, which Completion still sees. Where a
    /// retry is not possible — a Serialization chain, or a result delivered with
    /// `finish: false` — it counts as ``proceed()``.
    public func retry() {
        decide(allowsRetry ? .retry : .proceed)
    }

    /// Lets the call go on with `request` in place of ``request``: Execution phase only.
    ///
    /// The transport sends `request`, and every later interceptor of the attempt sees it as
    /// ``request``. This is how an interceptor adds a header, such as a request id or a cache
    /// validator. The change lasts for this attempt: a retry builds the request anew. In other
    /// phases it counts as ``proceed()``.
    ///
    /// - Parameter request: The request to send instead.
    public func proceed(with request: URLRequest) {
        decide(allowsRequestChange ? .proceedWith(request) : .proceed)
    }
}
