import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends one request and returns the response: what the pipeline uses to reach the network.
///
/// A transport honours `request.timeoutInterval` (throwing ``LeashError/timedOut``), throws
/// `CancellationError` when the calling task is cancelled, and returns every HTTP response,
/// whatever its status. Leash wraps any other error it throws in ``LeashError/transport(_:)``.
public protocol Transport: Sendable {
    /// Sends `request` and returns the body and the response head.
    ///
    /// - Parameter request: The request, fully built.
    /// - Returns: The body and the response head.
    /// - Throws: `CancellationError`, ``LeashError/timedOut``, or the transport's own error.
    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse)
}
