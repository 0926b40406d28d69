import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Every error Leash itself produces.
///
/// Errors thrown by interceptors or serializers that are not `LeashError` pass through
/// untouched; errors from a transport are wrapped once in ``transport(_:)``. Cancelling a call
/// ends it with `CancellationError`, never with a `LeashError`.
///
/// Descriptions never show secrets: query values and header values whose names look like
/// credentials (token, password, api key, authorization, cookie, secret) are replaced by `***`.
public enum LeashError: Error, CustomStringConvertible {
    /// The base URL, or a URL built from it and an endpoint's path, is not a valid absolute
    /// `http`/`https` URL with a host.
    case invalidURL(String)
    /// A builder setting is out of range, such as a timeout of zero or a negative
    /// `maxRetries`.
    case invalidConfiguration(String)
    /// The endpoint's parameters or headers cannot be turned into a request.
    case encoding(any Error)
    /// The response body could not be turned into the requested type.
    case decoding(any Error, data: Data)
    /// The server answered with a status outside the manager's `acceptableStatusCodes`.
    case unacceptableStatusCode(Int, response: HTTPURLResponse, data: Data)
    /// The transport failed: no connection, a dropped connection, a TLS failure, and so on.
    case transport(any Error)
    /// The attempt took longer than the manager's timeout.
    case timedOut
    /// Interceptors asked for more retries than the manager's `maxRetries` allows.
    case retryLimitExceeded(attempts: Int)
    /// A token refresh failed, so the call could not be authenticated.
    case authenticationFailed(any Error)

    private static func redacted(_ error: any Error) -> String {
        Redactor.default.redact(text: String(describing: error))
    }

    /// What went wrong and what to do about it, with secrets replaced by `***`.
    public var description: String {
        switch self {
        case .invalidURL(let url):
            return "Invalid URL '\(Redactor.default.redact(url: url))': use an absolute http or https URL with a host, "
                + "such as https://api.example.com/v1, and a path without spaces."
        case .invalidConfiguration(let reason):
            return "Invalid configuration: \(Redactor.default.redact(text: reason)). Fix the Manager.Builder call."
        case .encoding(let error):
            return "Could not encode the request: \(Self.redacted(error)). "
                + "Check the endpoint's parameters against the encoding table (a GET cannot carry a body)."
        case .decoding(let error, let data):
            return "Could not decode the response (\(data.count) bytes): \(Self.redacted(error)). "
                + "Check that the model matches the body, or use Empty for bodiless responses."
        case .unacceptableStatusCode(let code, let response, let data):
            let url = response.url.map { Redactor.default.redact(url: $0.absoluteString) } ?? "the server"
            return "Unacceptable status code \(code) from \(url) (\(data.count) bytes of body). "
                + "Handle it in a Failure interceptor or widen acceptableStatusCodes."
        case .transport(let error):
            return "The transport failed: \(Self.redacted(error)). "
                + "Check that the server is reachable and the URL is right."
        case .timedOut:
            return "The request timed out. Raise the manager's timeout or check that the server answers."
        case .retryLimitExceeded(let attempts):
            return "Gave up after \(attempts) attempts: interceptors asked for more retries than maxRetries allows. "
                + "Raise maxRetries or make the retrying interceptor stop sooner."
        case .authenticationFailed(let error):
            return "Authentication failed: \(Self.redacted(error)). "
                + "Sign the user in again; the token could not be refreshed."
        }
    }
}
