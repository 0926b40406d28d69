import Foundation
import Leash

/// A bearer token that refreshes itself: one refresh at a time, shared by every call that
/// needs it.
///
/// ```swift
/// let tokens = TokenAuthenticator(token: "t0") { expiredToken in
///     try await authClient.execute(AuthAPI.refresh, as: TokenReply.self).token
/// }
/// let manager = try Manager.Builder().url(base).authenticator(tokens)
///     .add(interceptor: TokenRefreshInterceptor(authenticator: tokens)).build()
/// ```
///
/// The token lives in this actor with a version number that goes up with every change.
/// ``TokenRefreshInterceptor`` asks it to refresh when a call fails with 401:
/// - a call that carried an older token than the current one is retried at once;
/// - otherwise the call waits for a refresh, and concurrent calls share the same one
///   (single flight), so 200 calls failing together cause one call of `refresh`;
/// - a refresh that fails ends every call sent before the failure with
///   `LeashError.authenticationFailed(_:)`; a call sent later may start a new refresh;
/// - more than `maxRefreshes` refreshes within `window` fail fast instead of looping.
///
/// Make the refresh call with a client that does not have the ``TokenRefreshInterceptor``. If
/// it does anyway, a 401 on the refresh call itself ends as
/// `LeashError.authenticationFailed(_:)` rather than waiting for itself.
public actor TokenAuthenticator: Authenticator {
    /// `Authorization`.
    public static let header = "Authorization"

    /// The current token, or `nil` when signed out.
    public private(set) var token: String?
    /// Goes up by one each time the token changes.
    public private(set) var version = 0
    /// How many refreshes may start within ``window``.
    public let maxRefreshes: Int
    /// The window over which refreshes are counted.
    public let window: Duration

    private let refresh: @Sendable (String?) async throws -> String
    private var refreshing = false
    private var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
    private var refreshStarts: [ContinuousClock.Instant] = []
    private var lastFailure: (at: ContinuousClock.Instant, error: any Error)?
    private var nextWaiter = 0

    /// Marks the task that runs the refresh closure, so its own 401 does not wait for itself.
    @TaskLocal static var isRefreshing = false

    /// Creates an authenticator.
    ///
    /// - Parameters:
    ///   - token: The token to start with, or `nil`.
    ///   - maxRefreshes: How many refreshes may start within `window`; 3 by default.
    ///   - window: The window over which refreshes are counted; 30 seconds by default.
    ///   - refresh: Gets a new token; receives the expired one. Throwing fails the calls that
    ///     waited for it.
    public init(
        token: String?,
        maxRefreshes: Int = 3,
        window: Duration = .seconds(30),
        refresh: @escaping @Sendable (_ expiredToken: String?) async throws -> String
    ) {
        self.token = token
        self.maxRefreshes = maxRefreshes
        self.window = window
        self.refresh = refresh
    }

    /// `Bearer <token>`, or `nil` without a token.
    public var authentication: String? {
        token.map { "Bearer \($0)" }
    }

    /// Replaces the token, after signing in or out.
    ///
    /// - Parameter token: The new token, or `nil` to sign out.
    public func setToken(_ token: String?) {
        self.token = token
        version += 1
    }

    /// Makes sure the token is newer than the one a failed request carried.
    ///
    /// Returns at once when the token already changed since; otherwise starts a refresh, or
    /// joins the one under way, and returns when it succeeds.
    ///
    /// - Parameters:
    ///   - failedAuthentication: The header value the failed request carried.
    ///   - sentAt: When the failed request was sent.
    /// - Throws: `LeashError.authenticationFailed(_:)` when the refresh failed, or failed
    ///   after this request was sent, or too many refreshes ran; `CancellationError` when the
    ///   calling task is cancelled (the refresh goes on for the others).
    public func refreshIfNeeded(after failedAuthentication: String?, sentAt: ContinuousClock.Instant) async throws {
        if failedAuthentication != authentication { return }
        if Self.isRefreshing {
            throw LeashError.authenticationFailed(RefreshError.refreshCallUnauthorized)
        }
        if !refreshing {
            if let lastFailure, sentAt <= lastFailure.at {
                throw LeashError.authenticationFailed(lastFailure.error)
            }
            let now = ContinuousClock.now
            refreshStarts.removeAll { now - $0 > window }
            guard refreshStarts.count < maxRefreshes else {
                throw LeashError.authenticationFailed(RefreshError.tooManyRefreshes(maxRefreshes, window))
            }
            refreshStarts.append(now)
            startRefresh()
        }
        try await waitForRefresh()
    }

    private func startRefresh() {
        refreshing = true
        let expired = token
        let refresh = self.refresh
        // An unstructured task: cancelling one waiting call must not cancel the refresh.
        Task {
            let result: Result<String, any Error>
            do {
                result = .success(try await Self.$isRefreshing.withValue(true) { try await refresh(expired) })
            } catch {
                result = .failure(error)
            }
            finishRefresh(with: result)
        }
    }

    private func finishRefresh(with result: Result<String, any Error>) {
        refreshing = false
        let waiting = waiters.values
        waiters.removeAll()
        switch result {
        case .success(let newToken):
            token = newToken
            version += 1
            lastFailure = nil
            for waiter in waiting { waiter.resume() }
        case .failure(let error):
            lastFailure = (ContinuousClock.now, error)
            let failure =
                (error as? LeashError).flatMap { error -> LeashError? in
                    if case .authenticationFailed = error { return error }
                    return nil
                } ?? LeashError.authenticationFailed(error)
            for waiter in waiting { waiter.resume(throwing: failure) }
        }
    }

    private func waitForRefresh() async throws {
        nextWaiter += 1
        let id = nextWaiter
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    waiters[id] = continuation
                }
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    private func cancelWaiter(_ id: Int) {
        waiters.removeValue(forKey: id)?.resume(throwing: CancellationError())
    }
}

/// Why a token refresh was refused.
public enum RefreshError: Error, CustomStringConvertible {
    /// More than the allowed number of refreshes started within the window.
    case tooManyRefreshes(Int, Duration)
    /// The refresh call itself was answered with 401 by a client that refreshes tokens.
    case refreshCallUnauthorized

    /// What happened and what to do.
    public var description: String {
        switch self {
        case .tooManyRefreshes(let count, let window):
            "more than \(count) token refreshes within \(window); the server keeps refusing fresh tokens, "
                + "so sign the user in again"
        case .refreshCallUnauthorized:
            "the refresh call itself was refused with 401; make it with a client that has no "
                + "TokenRefreshInterceptor, and sign the user in again"
        }
    }
}
