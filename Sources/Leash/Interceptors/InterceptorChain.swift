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
    public var client: Client { shared.client }
    /// The endpoint being called.
    public var endpoint: any Endpoint { shared.endpoint }
    /// This attempt's request, exactly as sent (authenticator header included), or the
    /// partial request (base URL and method) when it could not be built.
    public var request: URLRequest { shared.request }
    /// The attempt number: 0 for the first attempt, one more for each retry.
    public var attempt: Int { shared.number }
    /// When this attempt began; the same in every phase of the attempt.
    public var startedAt: ContinuousClock.Instant { shared.startedAt }
    /// Storage shared by all phases and attempts of this call.
    public var context: CallContext { shared.context }
    /// Which kind of transfer this call is, or `nil` for an ordinary call. Interceptors that
    /// hold bodies in memory (caches, de-duplication) let transfers pass.
    public var transfer: TransferKind? { shared.transfer }

    /// What every chain of the attempt shares, held once rather than copied into each chain.
    private let shared: Attempt
    let allowsRetry: Bool
    let allowsRequestChange: Bool
    // Guarded by the call's lock (`context.synchronized`): one lock per call rather than per chain.
    nonisolated(unsafe) private var decision: StoredDecision?

    /// What the interceptor decided, as the pipeline reads it.
    enum Decision {
        case proceed
        case proceedWith(URLRequest)
        case complete(Response<Value>, finish: Bool)
        case retry
    }

    init(attempt: Attempt, allowsRetry: Bool, allowsRequestChange: Bool = false) {
        self.shared = attempt
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
        decide(.complete(response as any Sendable, finish: finish))
    }

    /// Replaces the result with a value.
    ///
    /// - Parameters:
    ///   - value: The value to deliver.
    ///   - extra: Extra information delivered with it, such as an `HTTPURLResponse`.
    ///   - finish: `false` delivers the value and then carries on as if this interceptor had
    ///     proceeded.
    public func complete(with value: Value, extra: (any Sendable)? = nil, finish: Bool = true) {
        decide(.complete(Response<Value>.success(value: value, extra: extra) as any Sendable, finish: finish))
    }

    /// Replaces the result with an error.
    ///
    /// - Parameters:
    ///   - error: The error to deliver.
    ///   - finish: `false` delivers the error and then carries on as if this interceptor had
    ///     proceeded.
    public func complete(with error: any Error, finish: Bool = true) {
        decide(.complete(Response<Value>.failure(error) as any Sendable, finish: finish))
    }

    fileprivate func decide(_ newDecision: StoredDecision) {
        context.synchronized {
            if decision == nil { decision = newDecision }
        }
    }

    /// Ends the interceptor's turn: its decision, or `proceed` when it made none.
    func seal() -> Decision {
        let stored = context.synchronized {
            if decision == nil { decision = .proceed }
            return decision!
        }
        switch stored {
        case .proceed: return .proceed
        case .proceedWith(let request): return .proceedWith(request)
        case .retry: return .retry
        case .complete(let response, let finish):
            // Only this class's `complete` methods store a response, always a Response<Value>.
            return .complete(response as! Response<Value>, finish: finish)
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

/// A chain's decision as stored: outside the generic class, so that creating and destroying a
/// chain needs no generic metadata on the hot path. The response of `complete` is boxed.
enum StoredDecision {
    case proceed
    case proceedWith(URLRequest)
    case complete(any Sendable, finish: Bool)
    case retry
}
