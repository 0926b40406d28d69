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

    /// Sends `request`, uploading `body` as it is read, and returns as soon as the response
    /// head arrives; the body follows chunk by chunk. Used by downloads, uploads and streams.
    ///
    /// `request.timeoutInterval` bounds the wait for the head; the body may take as long as it
    /// takes (cancel the calling task to stop it). A default implementation sends through
    /// ``send(_:)`` with the whole body in memory.
    ///
    /// - Parameters:
    ///   - request: The request, fully built; its own body is replaced by `body` when given.
    ///   - body: What to upload, or `nil`.
    ///   - sent: Told how much of `body` has been sent, as it goes.
    /// - Returns: The response head and its body.
    /// - Throws: `CancellationError`, ``LeashError/timedOut``, or the transport's own error.
    func open(
        _ request: URLRequest,
        body: UploadBody?,
        sent: @escaping @Sendable (TransferProgress) -> Void
    ) async throws -> (HTTPURLResponse, ResponseBody)

    /// Sends `request` and writes the response body, whatever the status, to `file` as it
    /// arrives; returns the head once the body is complete. Used by downloads.
    ///
    /// `request.timeoutInterval` bounds the wait for the first bytes. A default implementation
    /// writes what ``open(_:body:sent:)`` returns, reading no faster than the file is written.
    ///
    /// - Parameters:
    ///   - request: The request, fully built.
    ///   - file: Where to write the body; created or truncated.
    ///   - received: Told how many bytes have been written, and how many are expected.
    /// - Returns: The response head.
    /// - Throws: `CancellationError`, ``LeashError/timedOut``, a ``TransferFailure`` when
    ///   `file` cannot be written, or the transport's own error.
    func download(
        _ request: URLRequest,
        to file: URL,
        received: @escaping @Sendable (TransferProgress) -> Void
    ) async throws -> HTTPURLResponse
}
