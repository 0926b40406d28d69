import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport that answers from canned responses, for tests: no network involved.
///
/// ```swift
/// let stub = StubTransport()
/// stub.stub(.get, "users/7", .json(#"{"id":7,"name":"Ada"}"#))
/// stub.stub(.get, "flaky", .status(503), .json("{}"))      // first call 503, then 200
/// stub.stub(.post, "users", .failure(URLError(.notConnectedToInternet)))
/// let manager = try Manager.Builder().url("https://api.test").transport(stub).build()
/// ```
///
/// Stubs match by method and path: the request's whole path (`/v1/users/7`) or its end on a
/// segment boundary (`users/7`). The newest matching stub wins. A stub with several
/// responses answers them in turn and repeats the last. A request with no stub fails with
/// ``LeashError/transport(_:)`` naming it. Every request is recorded in ``requests``.
public final class StubTransport: Transport {
    private struct Route {
        var method: HTTPMethod
        var path: String
        var responses: [StubResponse]
        var served = 0
    }

    private let routes = Locked<[Route]>([])
    private let recorded = Locked<[URLRequest]>([])
    private let recordsRequests: Bool
    private let handler: (@Sendable (URLRequest) async throws -> (Data, HTTPURLResponse))?

    /// Creates a transport with no stubs; add them with ``stub(_:_:_:)``.
    ///
    /// - Parameter recordsRequests: Whether to keep every request in ``requests``; turn it off
    ///   for long load tests, where the list would only grow.
    public init(recordsRequests: Bool = true) {
        self.recordsRequests = recordsRequests
        handler = nil
    }

    /// Creates a transport that answers every request with `handler`.
    ///
    /// - Parameters:
    ///   - recordsRequests: Whether to keep every request in ``requests``.
    ///   - handler: Returns the body and head for a request, or throws.
    public init(
        recordsRequests: Bool = true,
        handler: @escaping @Sendable (URLRequest) async throws -> (Data, HTTPURLResponse)
    ) {
        self.recordsRequests = recordsRequests
        self.handler = handler
    }

    /// Answers requests with `method` and `path` with `responses`, in turn, the last repeating.
    ///
    /// - Parameters:
    ///   - method: The method to match.
    ///   - path: The path to match: whole, or its last segments, with or without a leading `/`.
    ///   - responses: The responses, at least one.
    public func stub(_ method: HTTPMethod, _ path: String, _ responses: StubResponse...) {
        let trimmed = path.hasPrefix("/") ? String(path.dropFirst()) : path
        routes.withLock {
            $0.append(Route(method: method, path: trimmed, responses: responses.isEmpty ? [.status(200)] : responses))
        }
    }

    /// Every request sent so far, in order.
    public var requests: [URLRequest] {
        recorded.withLock { $0 }
    }

    /// Sends `request` to the matching stub.
    ///
    /// - Parameter request: The request.
    /// - Returns: The stubbed body and head.
    /// - Throws: The stub's error, ``LeashError/timedOut`` when its delay exceeds
    ///   `request.timeoutInterval`, `CancellationError`, or an error naming an unmatched request.
    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        if recordsRequests { recorded.withLock { $0.append(request) } }
        if let handler { return try await handler(request) }
        let method = HTTPMethod(request.httpMethod ?? "GET")
        let path = request.url.map { $0.path } ?? ""
        let response = routes.withLock { routes -> StubResponse? in
            guard let index = routes.lastIndex(where: { $0.method == method && Self.path(path, matches: $0.path) })
            else { return nil }
            let route = routes[index]
            routes[index].served += 1
            return route.responses[min(route.served, route.responses.count - 1)]
        }
        guard let response else {
            throw UnmatchedRequestError(method: method.rawValue, path: path)
        }
        if response.delay > .zero {
            // Clamped so that an infinite or huge timeout cannot overflow the conversion.
            let timeout = Duration.milliseconds(Int64(min(max(request.timeoutInterval, 0), 1e9) * 1000))
            if response.delay > timeout {
                try await Task.sleep(for: timeout)
                throw LeashError.timedOut
            }
            try await Task.sleep(for: response.delay)
        }
        try Task.checkCancellation()
        if let error = response.error { throw error }
        let url = request.url ?? URL(string: "http://stub.invalid")!
        let head = HTTPURLResponse(
            url: url,
            statusCode: response.statusCode,
            httpVersion: "HTTP/1.1",
            headerFields: response.headers
        )!
        return (response.body, head)
    }

    private static func path(_ path: String, matches stubPath: String) -> Bool {
        let requestPath = path.hasPrefix("/") ? String(path.dropFirst()) : path
        return requestPath == stubPath || requestPath.hasSuffix("/" + stubPath)
    }
}

/// A canned answer of a ``StubTransport``: a response, or an error, after an optional delay.
public struct StubResponse: Sendable {
    /// The status code.
    public var statusCode: Int
    /// The response headers.
    public var headers: [String: String]
    /// The body.
    public var body: Data
    /// How long to wait before answering; cancellable.
    public var delay: Duration
    /// An error to throw instead of answering.
    public var error: (any Error)?

    /// Creates a response.
    ///
    /// - Parameters:
    ///   - statusCode: The status code.
    ///   - headers: The response headers.
    ///   - body: The body.
    ///   - delay: How long to wait before answering.
    public init(statusCode: Int = 200, headers: [String: String] = [:], body: Data = Data(), delay: Duration = .zero) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.delay = delay
    }

    /// A response with `statusCode`, no body.
    ///
    /// - Parameters:
    ///   - statusCode: The status code.
    ///   - headers: The response headers.
    ///   - delay: How long to wait before answering.
    /// - Returns: The response.
    public static func status(_ statusCode: Int, headers: [String: String] = [:], delay: Duration = .zero)
        -> StubResponse
    {
        StubResponse(statusCode: statusCode, headers: headers, delay: delay)
    }

    /// A JSON response.
    ///
    /// - Parameters:
    ///   - json: The body, as JSON text.
    ///   - statusCode: The status code, 200 by default.
    ///   - delay: How long to wait before answering.
    /// - Returns: The response, with `Content-Type: application/json`.
    public static func json(_ json: String, statusCode: Int = 200, delay: Duration = .zero) -> StubResponse {
        StubResponse(
            statusCode: statusCode,
            headers: ["Content-Type": "application/json"],
            body: Data(json.utf8),
            delay: delay
        )
    }

    /// An error thrown instead of a response, as a failing network would.
    ///
    /// - Parameters:
    ///   - error: The error, such as `URLError(.notConnectedToInternet)`.
    ///   - delay: How long to wait before failing.
    /// - Returns: The failure.
    public static func failure(_ error: any Error, delay: Duration = .zero) -> StubResponse {
        var response = StubResponse(delay: delay)
        response.error = error
        return response
    }
}

/// A ``StubTransport`` got a request it has no stub for.
struct UnmatchedRequestError: Error, CustomStringConvertible {
    let method: String
    let path: String
    var description: String { "StubTransport has no stub for \(method) \(path); add one with stub(_:_:_:)" }
}
