import Foundation
import Leash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Refreshes the token of a ``TokenAuthenticator`` when a call is refused, then retries it.
///
/// ```swift
/// let tokens = TokenAuthenticator(token: storedToken) { expired in try await renew(expired) }
/// let manager = try Manager.Builder().url(base)
///     .authenticator(tokens)
///     .add(interceptor: TokenRefreshInterceptor(authenticator: tokens))
///     .build()
/// ```
///
/// It acts in the Failure phase on `LeashError.unacceptableStatusCode(_:response:data:)`
/// with one of `statusCodes` (401 by default), and in the Success phase when the manager's
/// `acceptableStatusCodes` let such a status through. A call that carried an older token than
/// the current one is retried at once; the others wait for one shared refresh and are then
/// retried. When the refresh fails, the call ends with `LeashError.authenticationFailed(_:)`.
/// Each retry counts toward the manager's `maxRetries`.
public struct TokenRefreshInterceptor: FailureInterceptor, SuccessInterceptor {
    /// The authenticator whose token is refreshed.
    public let authenticator: TokenAuthenticator
    /// The statuses that mean "the token is no longer valid".
    public let statusCodes: Set<Int>

    /// Creates the interceptor.
    ///
    /// - Parameters:
    ///   - authenticator: The authenticator registered with the manager.
    ///   - statusCodes: The statuses that trigger a refresh; `[401]` by default.
    public init(authenticator: TokenAuthenticator, statusCodes: Set<Int> = [401]) {
        self.authenticator = authenticator
        self.statusCodes = statusCodes
    }

    /// Refreshes and retries when the failure is a refused token.
    ///
    /// - Parameters:
    ///   - chain: The chain of this attempt.
    ///   - error: The failure.
    public func intercept(chain: InterceptorChain<Data>, error: any Error) async {
        guard case LeashError.unacceptableStatusCode(let status, _, _) = error, statusCodes.contains(status) else {
            return
        }
        await refreshAndRetry(chain)
    }

    /// Refreshes and retries when an accepted status is a refused token.
    ///
    /// - Parameters:
    ///   - chain: The chain of this attempt.
    ///   - response: The response head.
    ///   - data: The body.
    public func intercept(chain: InterceptorChain<Data>, response: HTTPURLResponse, data: Data) async {
        guard statusCodes.contains(response.statusCode) else { return }
        await refreshAndRetry(chain)
    }

    private func refreshAndRetry(_ chain: InterceptorChain<Data>) async {
        let sent = chain.request.value(forHTTPHeaderField: TokenAuthenticator.header)
        do {
            try await authenticator.refreshIfNeeded(after: sent, sentAt: chain.startedAt)
            chain.retry()
        } catch {
            chain.complete(with: error)
        }
    }
}
