import Foundation
import Leash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Retries failed attempts with exponential backoff and full jitter.
///
/// ```swift
/// let manager = try Manager.Builder().url(base)
///     .add(interceptor: .retry(maxAttempts: 4, baseDelay: .milliseconds(200)))
///     .build()
/// ```
///
/// It acts in the Failure phase. An attempt is retried when:
/// - it failed with a transport error or a timeout, or with one of `statusCodes`
///   (408, 429, 500, 502, 503, 504 by default);
/// - its method is one of `methods` (the idempotent GET, HEAD, OPTIONS, PUT and DELETE by
///   default: a POST is not sent twice unless you say so);
/// - fewer than `maxAttempts` attempts were made, counting the first (the manager's
///   `maxRetries` still bounds the call).
///
/// Before attempt *n* (the first retry is *n* = 1) it waits a random time between zero and
/// `min(maxDelay, baseDelay × 2ⁿ⁻¹)`. A `Retry-After` header on the failed response (seconds
/// or an HTTP date) replaces that delay, capped by `maxDelay`. The wait is cancellable:
/// cancelling the call ends it with `CancellationError` at once.
public struct RetryInterceptor: FailureInterceptor {
    /// How many attempts a call may make, the first included.
    public let maxAttempts: Int
    /// The upper bound of the first retry's delay; it doubles with each retry.
    public let baseDelay: Duration
    /// The longest delay, `Retry-After` included.
    public let maxDelay: Duration
    /// The statuses that are worth another attempt.
    public let statusCodes: Set<Int>
    /// The methods that may be sent again.
    public let methods: Set<HTTPMethod>

    /// Waits before a retry; replaced in tests to record the delays.
    var sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }

    /// Creates the interceptor.
    ///
    /// - Parameters:
    ///   - maxAttempts: How many attempts a call may make, the first included; 3 by default.
    ///   - baseDelay: The upper bound of the first retry's delay; 300 ms by default.
    ///   - maxDelay: The longest delay, `Retry-After` included; 20 s by default.
    ///   - statusCodes: The statuses to retry.
    ///   - methods: The methods that may be sent again.
    public init(
        maxAttempts: Int = 3,
        baseDelay: Duration = .milliseconds(300),
        maxDelay: Duration = .seconds(20),
        statusCodes: Set<Int> = [408, 429, 500, 502, 503, 504],
        methods: Set<HTTPMethod> = [.get, .head, .options, .put, .delete]
    ) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.statusCodes = statusCodes
        self.methods = methods
    }

    /// Waits and retries when the failure is worth another attempt.
    ///
    /// - Parameters:
    ///   - chain: The chain of this attempt.
    ///   - error: The failure.
    public func intercept(chain: InterceptorChain<Data>, error: any Error) async {
        guard chain.attempt + 1 < maxAttempts, methods.contains(HTTPMethod(chain.request.httpMethod ?? "GET")) else {
            return
        }
        let delay: Duration
        switch error {
        case LeashError.unacceptableStatusCode(let status, let response, _) where statusCodes.contains(status):
            delay = retryAfter(response) ?? backoff(retry: chain.attempt + 1)
        case LeashError.transport, LeashError.timedOut:
            delay = backoff(retry: chain.attempt + 1)
        default:
            return
        }
        do {
            try await sleep(delay)
        } catch {
            // Cancelled while waiting: the pipeline ends the call with CancellationError.
            return
        }
        chain.retry()
    }

    /// A random delay up to `min(maxDelay, baseDelay × 2^(retry - 1))`.
    func backoff(retry: Int) -> Duration {
        let ceiling = min(maxDelay, baseDelay * (1 << min(retry - 1, 30)))
        let attoseconds = Double(ceiling.components.seconds) * 1e18 + Double(ceiling.components.attoseconds)
        return .nanoseconds(Int64(Double.random(in: 0...1) * attoseconds / 1e9))
    }

    /// The response's `Retry-After`, capped by `maxDelay`, or `nil` when it has none that parses.
    func retryAfter(_ response: HTTPURLResponse) -> Duration? {
        guard let value = response.value(forHTTPHeaderField: "Retry-After")?.trimmingCharacters(in: .whitespaces)
        else { return nil }
        let delay: Duration
        if let seconds = Int(value) {
            delay = .seconds(max(seconds, 0))
        } else if let date = Self.httpDate(value) {
            delay = .milliseconds(max(Int64(date.timeIntervalSinceNow * 1000), 0))
        } else {
            return nil
        }
        return min(delay, maxDelay)
    }

    /// Parses an IMF-fixdate such as `Wed, 21 Oct 2015 07:28:00 GMT`.
    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}

extension Interceptor where Self == RetryInterceptor {
    /// Retries failed attempts with exponential backoff and full jitter; see ``RetryInterceptor``.
    ///
    /// - Parameters:
    ///   - maxAttempts: How many attempts a call may make, the first included.
    ///   - baseDelay: The upper bound of the first retry's delay.
    ///   - maxDelay: The longest delay, `Retry-After` included.
    /// - Returns: The interceptor.
    public static func retry(
        maxAttempts: Int = 3,
        baseDelay: Duration = .milliseconds(300),
        maxDelay: Duration = .seconds(20)
    ) -> RetryInterceptor {
        RetryInterceptor(maxAttempts: maxAttempts, baseDelay: baseDelay, maxDelay: maxDelay)
    }
}
