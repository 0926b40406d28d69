import AsyncHTTPClient
import Foundation
import Leash
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
        /// How long to wait for a connection.
        public var connectTimeout: Duration
        /// Whether HTTP/2 may be used when the server offers it over TLS.
        public var prefersHTTP2: Bool
        /// The largest body accepted; a larger one fails the attempt.
        public var maximumBodySize: Int
        /// How many redirects to follow; 0 returns redirect responses as they are.
        public var maximumRedirects: Int
        /// Which servers to trust over TLS.
        public var trustPolicy: TrustPolicy

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - maximumConnectionsPerHost: HTTP/1.1 connections per host; 8 by default.
        ///   - connectTimeout: How long to wait for a connection; 10 seconds by default.
        ///   - prefersHTTP2: Use HTTP/2 when the server offers it; `true` by default.
        ///   - maximumBodySize: The largest body accepted; 100 MiB by default.
        ///   - maximumRedirects: How many redirects to follow; 5 by default.
        ///   - trustPolicy: Which servers to trust; the system's roots by default.
        public init(
            maximumConnectionsPerHost: Int = 8,
            connectTimeout: Duration = .seconds(10),
            prefersHTTP2: Bool = true,
            maximumBodySize: Int = 100 * 1024 * 1024,
            maximumRedirects: Int = 5,
            trustPolicy: TrustPolicy = .system
        ) {
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
            self.connectTimeout = connectTimeout
            self.prefersHTTP2 = prefersHTTP2
            self.maximumBodySize = maximumBodySize
            self.maximumRedirects = maximumRedirects
            self.trustPolicy = trustPolicy
        }
    }

    /// The client requests go through.
    public let client: HTTPClient
    /// The largest body accepted.
    public let maximumBodySize: Int
    /// The trust policy, when this transport made its own client.
    public let trustPolicy: TrustPolicy?
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
        var http = HTTPClient.Configuration(
            tlsConfiguration: tls,
            redirectConfiguration: configuration.maximumRedirects > 0
                ? .follow(max: configuration.maximumRedirects, allowCycles: false) : .disallow,
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
        self.ownsClient = true
    }

    /// Creates a transport over an `HTTPClient` you own and shut down yourself.
    ///
    /// - Parameters:
    ///   - client: The client.
    ///   - maximumBodySize: The largest body accepted; 100 MiB by default.
    public init(client: HTTPClient, maximumBodySize: Int = 100 * 1024 * 1024) {
        self.client = client
        self.maximumBodySize = maximumBodySize
        self.trustPolicy = nil
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
        guard let url = request.url else { throw LeashError.invalidURL("") }
        var outgoing = HTTPClientRequest(url: url.absoluteString)
        outgoing.method = NIOHTTP1.HTTPMethod(rawValue: request.httpMethod ?? "GET")
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            outgoing.headers.add(name: name, value: value)
        }
        if let body = request.httpBody {
            outgoing.body = .bytes(ByteBuffer(data: body))
        }
        let seconds = request.timeoutInterval.isFinite ? max(request.timeoutInterval, 0.001) : 1e9
        do {
            let response = try await client.execute(
                outgoing, timeout: .nanoseconds(Int64(min(seconds, 1e9) * 1e9)))
            let body = try await response.body.collect(upTo: maximumBodySize)
            var headers: [String: String] = [:]
            for (name, value) in response.headers {
                headers[name] = headers[name].map { $0 + ", " + value } ?? value
            }
            // Parse the final URL only after a redirect; otherwise it is the request's.
            let finalURL = response.history.count > 1 ? (response.url ?? url) : url
            let head = HTTPURLResponse(
                url: finalURL,
                statusCode: Int(response.status.code),
                httpVersion: "HTTP/\(response.version.major).\(response.version.minor)",
                headerFields: headers
            )!
            return (Data(buffer: body), head)
        } catch {
            throw translate(error)
        }
    }

    private func translate(_ error: any Error) -> any Error {
        if Task.isCancelled || error is CancellationError { return CancellationError() }
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout: return LeashError.timedOut
            case .cancelled: return CancellationError()
            default: return LeashError.transport(error)
            }
        }
        if let policy = trustPolicy, policy != .system, Self.isTrustFailure(error) {
            return LeashError.transport(PinningFailure(policy: policy, underlying: error))
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

/// The server's certificate chain did not end in a pinned certificate.
public struct PinningFailure: Error, CustomStringConvertible {
    /// The policy that refused the server.
    public let policy: TrustPolicy
    /// The TLS error underneath.
    public let underlying: any Error

    /// What happened and what to do.
    public var description: String {
        "the server's certificate does not match the \(policy == .system ? "system trust" : "pinned certificates") "
            + "(\(underlying)); check the pins, or the server is not the one you expect"
    }
}
