import AsyncHTTPClient
import Foundation
import Leash
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOSSL

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport over AsyncHTTPClient: for servers on Linux, where URLSession is slower, cannot
/// check certificates against pins, and hangs on some 401s.
///
/// ```swift
/// let transport = try AsyncHTTPClientTransport(
///     configuration: .init(maximumConnectionsPerHost: 16, trustPolicy: .pinnedCertificates([caDER])))
/// let manager = try Manager.Builder().url("https://api.internal").transport(transport).build()
/// // … when the app shuts down:
/// try await transport.shutdown()
/// ```
///
/// The pipeline sees the same thing as with ``Leash/URLSessionTransport``: every HTTP
/// response whatever its status, `CancellationError` when the calling task is cancelled,
/// `LeashError.timedOut` when `request.timeoutInterval` runs out (a deadline for the whole
/// attempt), `LeashError.transport` for everything else, and redirects followed.
///
/// A transport made with ``init(configuration:)`` owns its `HTTPClient`: call ``shutdown()``
/// when done (if you do not, it shuts the client down when it is released). One made with
/// ``init(client:maximumBodySize:)`` borrows it, and the client's owner shuts it down.
public final class AsyncHTTPClientTransport: Transport {
    /// How the transport's own `HTTPClient` is set up.
    public struct Configuration: Sendable {
        /// How many HTTP/1.1 connections to keep per host.
        public var maximumConnectionsPerHost: Int
        /// How long to wait for a connection, a free one from the pool included; waiting
        /// longer ends the attempt with ``LeashError/timedOut``.
        public var connectTimeout: Duration
        /// Whether HTTP/2 may be used when the server offers it over TLS.
        public var prefersHTTP2: Bool
        /// The largest body accepted; a larger one fails the attempt.
        public var maximumBodySize: Int
        /// How many redirects to follow; 0 returns redirect responses as they are.
        public var maximumRedirects: Int
        /// Which servers to trust over TLS.
        public var trustPolicy: TrustPolicy
        /// Whether to follow redirects from HTTPS to plain HTTP.
        public var allowsInsecureRedirects: Bool

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - maximumConnectionsPerHost: HTTP/1.1 connections per host; 8 by default.
        ///   - connectTimeout: How long to wait for a connection; 10 seconds by default.
        ///   - prefersHTTP2: Use HTTP/2 when the server offers it; `true` by default.
        ///   - maximumBodySize: The largest body accepted; 100 MiB by default.
        ///   - maximumRedirects: How many redirects to follow; 5 by default.
        ///   - trustPolicy: Which servers to trust; the system's roots by default.
        ///   - allowsInsecureRedirects: Follow redirects from HTTPS to plain HTTP; `false` by default.
        public init(
            maximumConnectionsPerHost: Int = 8,
            connectTimeout: Duration = .seconds(10),
            prefersHTTP2: Bool = true,
            maximumBodySize: Int = 100 * 1024 * 1024,
            maximumRedirects: Int = 5,
            trustPolicy: TrustPolicy = .system,
            allowsInsecureRedirects: Bool = false
        ) {
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
            self.connectTimeout = connectTimeout
            self.prefersHTTP2 = prefersHTTP2
            self.maximumBodySize = maximumBodySize
            self.maximumRedirects = maximumRedirects
            self.trustPolicy = trustPolicy
            self.allowsInsecureRedirects = allowsInsecureRedirects
        }
    }

    /// The client requests go through.
    public let client: HTTPClient
    /// The largest body accepted.
    public let maximumBodySize: Int
    /// The trust policy, when this transport made its own client.
    public let trustPolicy: TrustPolicy?
    /// How many redirects the transport follows.
    public let maximumRedirects: Int
    /// Whether the transport follows redirects from HTTPS to plain HTTP.
    public let allowsInsecureRedirects: Bool
    private let ownsClient: Bool
    private let isShutDown = Locked(false)

    /// Creates a transport with its own `HTTPClient`.
    ///
    /// - Parameter configuration: How the client is set up.
    /// - Throws: `LeashError.invalidConfiguration` for a trust policy AsyncHTTPClient cannot
    ///   enforce (public-key pins) or a pinned certificate that is not DER.
    public init(configuration: Configuration = Configuration()) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        switch configuration.trustPolicy {
        case .system:
            break
        case .pinnedCertificates(let certificates):
            guard !certificates.isEmpty else {
                throw LeashError.invalidConfiguration("pinnedCertificates needs at least one certificate")
            }
            do {
                tls.trustRoots = .certificates(
                    try certificates.map { try NIOSSLCertificate(bytes: Array($0), format: .der) })
            } catch {
                throw LeashError.invalidConfiguration("a pinned certificate is not a DER certificate: \(error)")
            }
        case .pinnedPublicKeys:
            throw LeashError.invalidConfiguration(
                "AsyncHTTPClientTransport cannot enforce pinned public keys: AsyncHTTPClient offers no hook to check "
                    + "the key during the handshake. Pin the certificates (TrustPolicy.pinnedCertificates) instead")
        }
        // The transport follows redirects itself, to apply RedirectRule as URLSessionTransport does.
        var http = HTTPClient.Configuration(
            tlsConfiguration: tls,
            redirectConfiguration: .disallow,
            timeout: .init(connect: .nanoseconds(Self.nanoseconds(configuration.connectTimeout))),
            connectionPool: .init(
                idleTimeout: .seconds(60),
                concurrentHTTP1ConnectionsPerHostSoftLimit: max(configuration.maximumConnectionsPerHost, 1))
        )
        http.httpVersion = configuration.prefersHTTP2 ? .automatic : .http1Only
        // Fail a refused connection or a TLS failure at once, as URLSession does, rather than
        // retrying until the deadline; RetryInterceptor is the place for retries.
        http.connectionPool.retryConnectionEstablishment = false
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: http)
        self.maximumBodySize = configuration.maximumBodySize
        self.trustPolicy = configuration.trustPolicy
        self.maximumRedirects = max(configuration.maximumRedirects, 0)
        self.allowsInsecureRedirects = configuration.allowsInsecureRedirects
        self.ownsClient = true
    }

    /// Creates a transport over an `HTTPClient` you own and shut down yourself.
    ///
    /// Configure the client with `redirectConfiguration: .disallow`: the transport follows
    /// redirects itself (up to `maximumRedirects`), so that they obey the same rules as with
    /// ``Leash/URLSessionTransport``.
    ///
    /// - Parameters:
    ///   - client: The client.
    ///   - maximumBodySize: The largest body accepted; 100 MiB by default.
    ///   - maximumRedirects: How many redirects to follow; 5 by default.
    ///   - allowsInsecureRedirects: Follow redirects from HTTPS to plain HTTP; `false` by default.
    public init(
        client: HTTPClient,
        maximumBodySize: Int = 100 * 1024 * 1024,
        maximumRedirects: Int = 5,
        allowsInsecureRedirects: Bool = false
    ) {
        self.client = client
        self.maximumBodySize = maximumBodySize
        self.trustPolicy = nil
        self.maximumRedirects = max(maximumRedirects, 0)
        self.allowsInsecureRedirects = allowsInsecureRedirects
        self.ownsClient = false
    }

    deinit {
        guard ownsClient, !isShutDown.withLock({ $0 }) else { return }
        // AsyncHTTPClient requires a shutdown before its client goes away; the task keeps the
        // client alive until it is done.
        let client = client
        Task { try? await client.shutdown() }
    }

    /// Shuts down the client this transport made; does nothing for a borrowed one.
    ///
    /// - Throws: The client's shutdown error.
    public func shutdown() async throws {
        guard ownsClient else { return }
        let first = isShutDown.withLock { shutDown in
            defer { shutDown = true }
            return !shutDown
        }
        if first { try await client.shutdown() }
    }

    /// Sends `request` and returns the body and head of any HTTP response.
    ///
    /// - Parameter request: The request.
    /// - Returns: The body and the response head.
    /// - Throws: `CancellationError`, `LeashError.timedOut`, or `LeashError.transport`.
    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (outgoing, url) = try Self.outgoing(request)
        do {
            let (response, finalURL) = try await execute(outgoing, url: url, timeout: Self.timeout(of: request))
            let body = try await response.body.collect(upTo: maximumBodySize)
            return (Data(buffer: body), Self.head(of: response, url: finalURL))
        } catch {
            throw translate(error)
        }
    }

    /// Sends `request`, uploading `body` from memory or read from its file as AsyncHTTPClient
    /// asks for more, and returns once the head arrives; the body is read from the connection
    /// only as fast as the caller reads it.
    ///
    /// `request.timeoutInterval` bounds the wait for the head. The body has no size limit.
    ///
    /// - Parameters:
    ///   - request: The request; its own body is replaced by `body` when given.
    ///   - body: What to upload, or `nil`.
    ///   - sent: Told how much of `body` has been handed to the connection.
    /// - Returns: The response head and its body.
    /// - Throws: `CancellationError`, `LeashError.timedOut`, or `LeashError.transport`.
    public func open(
        _ request: URLRequest,
        body: UploadBody?,
        sent: @escaping @Sendable (TransferProgress) -> Void
    ) async throws -> (HTTPURLResponse, ResponseBody) {
        var (outgoing, url) = try Self.outgoing(request)
        if let body {
            let length = try body.length()
            // AsyncHTTPClient writes Content-Length from the body's known length.
            outgoing.headers.remove(name: "Content-Length")
            outgoing.body = .stream(UploadChunks(body: body, length: length, sent: sent), length: .known(length))
        }
        do {
            let (response, finalURL) = try await execute(outgoing, url: url, timeout: Self.timeout(of: request))
            let reader = BodyReader(response.body.makeAsyncIterator())
            let body = ResponseBody(
                next: {
                    do {
                        return try await reader.next()
                    } catch {
                        throw self.translate(error)
                    }
                },
                cancel: { reader.cancel() })
            return (Self.head(of: response, url: finalURL), body)
        } catch {
            throw translate(error)
        }
    }

    private static func outgoing(_ request: URLRequest) throws -> (HTTPClientRequest, URL) {
        guard let url = request.url else { throw LeashError.invalidURL("") }
        var outgoing = HTTPClientRequest(url: url.absoluteString)
        outgoing.method = NIOHTTP1.HTTPMethod(rawValue: request.httpMethod ?? "GET")
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            outgoing.headers.add(name: name, value: value)
        }
        if let body = request.httpBody {
            outgoing.body = .bytes(ByteBuffer(data: body))
        }
        return (outgoing, url)
    }

    private static func timeout(of request: URLRequest) -> TimeAmount {
        let seconds = request.timeoutInterval.isFinite ? max(request.timeoutInterval, 0.001) : 1e9
        return .nanoseconds(Int64(min(seconds, 1e9) * 1e9))
    }

    /// Sends `request`, following redirects as the redirect rule says, within one deadline.
    /// Returns the final response and its URL.
    private func execute(_ request: HTTPClientRequest, url: URL, timeout: TimeAmount) async throws -> (
        HTTPClientResponse, URL
    ) {
        let deadline = NIODeadline.now() + timeout
        var request = request
        var url = url
        // Built on the first redirect only: most calls have none.
        var visited: Set<URL> = []
        while true {
            let response = try await client.execute(request, deadline: deadline)
            guard Self.redirectStatuses.contains(response.status.code),
                let location = response.headers.first(name: "Location"),
                let target = URL(string: location, relativeTo: url)?.absoluteURL,
                target.scheme == "http" || target.scheme == "https"
            else { return (response, url) }
            guard maximumRedirects > 0 else { return (response, url) }
            if visited.isEmpty { visited.insert(url) }
            guard visited.count <= maximumRedirects else { throw HTTPClientError.redirectLimitReached }
            guard visited.insert(target).inserted else { throw HTTPClientError.redirectCycleDetected }
            let keepsCredentials = try RedirectRule.keepsCredentials(
                from: url, to: target, allowsDowngrade: allowsInsecureRedirects)
            // The redirect's body is left unread and dropped with `response` at the end of this
            // pass, which ends that request (closing its connection): reading it could wait
            // past the deadline, which AsyncHTTPClient applies to heads only.
            if !keepsCredentials {
                for name in RedirectRule.credentialHeaders { request.headers.remove(name: name) }
            }
            // 303, and 301/302 after a POST, become a GET without a body, as browsers do.
            let code = response.status.code
            if (code == 303 && request.method != .HEAD) || ((code == 301 || code == 302) && request.method == .POST) {
                request.method = .GET
                request.body = nil
                request.headers.remove(name: "Content-Length")
                request.headers.remove(name: "Content-Type")
            }
            request.url = target.absoluteString
            url = target
        }
    }

    private static let redirectStatuses: Set<UInt> = [301, 302, 303, 307, 308]

    private static func head(of response: HTTPClientResponse, url finalURL: URL) -> HTTPURLResponse {
        var headers: [String: String] = [:]
        headers.reserveCapacity(response.headers.count)
        for (name, value) in response.headers {
            if let index = headers.index(forKey: name) {
                headers.values[index] += ", " + value
            } else {
                headers[name] = value
            }
        }
        let version =
            switch (response.version.major, response.version.minor) {
            case (1, 1): "HTTP/1.1"
            case (2, 0): "HTTP/2.0"
            case let (major, minor): "HTTP/\(major).\(minor)"
            }
        return HTTPURLResponse(
            url: finalURL, statusCode: Int(response.status.code), httpVersion: version, headerFields: headers)!
    }

    private func translate(_ error: any Error) -> any Error {
        if error is LeashError { return error }
        if error is RedirectRefused || error is TransferFailure { return LeashError.transport(error) }
        if Task.isCancelled || error is CancellationError { return CancellationError() }
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .getConnectionFromPoolTimeout:
                return LeashError.timedOut
            case .cancelled: return CancellationError()
            default: return LeashError.transport(error)
            }
        }
        if let policy = trustPolicy, policy != .system, Self.isTrustFailure(error) {
            return LeashError.transport(
                PinningFailure(
                    policy: policy, reason: "the server's certificate chain does not end in a pinned certificate",
                    underlying: error))
        }
        return LeashError.transport(error)
    }

    private static func isTrustFailure(_ error: any Error) -> Bool {
        if error is NIOSSLError { return true }
        let text = String(describing: error)
        return text.contains("certificate") || text.contains("CERTIFICATE") || text.contains("handshake")
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }
}

/// A response body being read from AsyncHTTPClient. Dropping the iterator ends the request.
private final class BodyReader: @unchecked Sendable {
    // Safe: `iterator` and `cancelled` are only touched under `lock`. A read takes the
    // iterator out and puts it back only if no cancel() came meanwhile; otherwise the iterator
    // is dropped when the read returns, which ends the request.
    private let lock = NIOLock()
    private var iterator: HTTPClientResponse.Body.AsyncIterator?
    private var cancelled = false

    init(_ iterator: HTTPClientResponse.Body.AsyncIterator) {
        self.iterator = iterator
    }

    func next() async throws -> Data? {
        let taken = lock.withLock { () -> HTTPClientResponse.Body.AsyncIterator? in
            defer { iterator = nil }
            return cancelled ? nil : iterator
        }
        guard var current = taken, let buffer = try await current.next() else { return nil }
        let kept = lock.withLock {
            if !cancelled { iterator = current }
            return !cancelled
        }
        return kept ? Data(buffer: buffer) : nil
    }

    func cancel() {
        lock.withLock {
            cancelled = true
            iterator = nil
        }
    }
}

/// An upload body read 64 KiB at a time, as AsyncHTTPClient asks for it.
private struct UploadChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    let body: UploadBody
    let length: Int64
    let sent: @Sendable (TransferProgress) -> Void

    func makeAsyncIterator() -> Iterator {
        Iterator(chunks: self)
    }

    struct Iterator: AsyncIteratorProtocol {
        let chunks: UploadChunks
        var offset: Int64 = 0
        var file: FileHandle?

        mutating func next() async throws -> ByteBuffer? {
            guard offset < chunks.length else {
                try? file?.close()
                file = nil
                return nil
            }
            let size = Int(Swift.min(Int64(64 * 1024), chunks.length - offset))
            let piece: Data
            switch chunks.body {
            case .data(let data):
                let start = data.startIndex + Int(offset)
                piece = data[start..<start + size]
            case .file(let url):
                if file == nil {
                    do {
                        file = try FileHandle(forReadingFrom: url)
                    } catch {
                        throw TransferFailure("cannot read the upload file \(url.path): \(error)")
                    }
                }
                piece = try file?.read(upToCount: size) ?? Data()
                guard !piece.isEmpty else { throw TransferFailure("the upload file \(url.path) got shorter") }
            }
            offset += Int64(piece.count)
            chunks.sent(TransferProgress(completedBytes: offset, expectedBytes: chunks.length))
            return ByteBuffer(data: piece)
        }
    }
}
