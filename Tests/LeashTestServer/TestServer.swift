import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// A request as the test server received it.
public struct TestRequest: Sendable {
    /// The method, such as `GET`.
    public let method: String
    /// The path, percent-encoded as sent, without the query.
    public let path: String
    /// The raw query string as sent, or `nil`.
    public let query: String?
    /// The request headers, names lowercased; repeated headers joined with `, `.
    public let headers: [String: String]
    /// The body.
    public let body: Data

    /// Creates a request, for handlers called outside the server.
    public init(method: String, path: String, query: String?, headers: [String: String], body: Data) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// The value of a header, by case-insensitive name.
    public func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }

    /// The query items, decoded, in order.
    public var queryItems: [(name: String, value: String)] {
        guard let query, !query.isEmpty else { return [] }
        return query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
            return (name, value)
        }
    }
}

/// What the test server does with a request.
public struct TestResponse: Sendable {
    /// What the server does.
    public enum Action: Sendable {
        /// Sends the response.
        case respond
        /// Keeps the connection open and never answers.
        case neverRespond
        /// Closes the connection without answering.
        case close
        /// Sends the head, then the body as `produce` writes it, each chunk flushed before
        /// `write` returns. Without a `Content-Length` header the body is chunked. When
        /// `produce` throws, the connection closes mid-body.
        case stream(@Sendable (TestBodyWriter) async throws -> Void)
    }

    /// The status code.
    public var status: Int
    /// The response headers.
    public var headers: [(String, String)]
    /// The body.
    public var body: Data
    /// What the server does.
    public var action: Action

    /// Creates a response.
    public init(status: Int = 200, headers: [(String, String)] = [], body: Data = Data(), action: Action = .respond) {
        self.status = status
        self.headers = headers
        self.body = body
        self.action = action
    }

    /// A JSON response from text.
    public static func json(_ text: String, status: Int = 200, headers: [(String, String)] = []) -> TestResponse {
        TestResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: Data(text.utf8))
    }

    /// A JSON response from an encodable value.
    public static func json(_ value: some Encodable, status: Int = 200) -> TestResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return TestResponse(
            status: status,
            headers: [("Content-Type", "application/json")],
            body: (try? encoder.encode(value)) ?? Data()
        )
    }

    /// A plain-text response.
    public static func text(_ text: String, status: Int = 200) -> TestResponse {
        TestResponse(status: status, headers: [("Content-Type", "text/plain")], body: Data(text.utf8))
    }

    /// A response with only a status.
    public static func status(_ status: Int, headers: [(String, String)] = []) -> TestResponse {
        TestResponse(status: status, headers: headers)
    }
}

/// Writes a streamed response body: see ``TestResponse/Action/stream(_:)``.
public struct TestBodyWriter: Sendable {
    fileprivate let channel: any Channel

    /// Sends `data` and waits until it has been flushed to the connection.
    ///
    /// - Throws: When the connection has closed.
    public func write(_ data: Data) async throws {
        let part = HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: data)))
        try await channel.writeAndFlush(part).get()
    }
}

/// Answers one request.
public typealias TestHandler = @Sendable (TestRequest) async -> TestResponse

/// A real HTTP/1.1 server on 127.0.0.1 with a random port, for tests and demos.
///
/// ```swift
/// let server = try await TestServer.start { request in .json(#"{"ok":true}"#) }
/// defer { Task { try await server.shutdown() } }
/// ```
public final class TestServer: Sendable {
    /// The port the server listens on.
    public let port: Int
    private let channel: any Channel
    private let connections: Connections

    private let scheme: String

    /// `http://127.0.0.1:<port>`, or `https://localhost:<port>` when serving TLS.
    public var baseURL: String { scheme == "https" ? "https://localhost:\(port)" : "http://127.0.0.1:\(port)" }

    /// How many connections the server has accepted.
    public var connectionCount: Int { connections.accepted }

    /// How many connections are open now.
    public var openConnectionCount: Int { connections.open.count }

    /// How many requests the server has received.
    public var requestCount: Int { connections.requests }

    private init(channel: any Channel, connections: Connections, scheme: String) {
        self.scheme = scheme
        self.channel = channel
        self.connections = connections
        self.port = channel.localAddress?.port ?? 0
    }

    /// Starts a server that answers every request with `handler`.
    ///
    /// - Parameters:
    ///   - tls: A certificate and key to serve HTTPS with; plain HTTP when `nil`.
    ///   - handler: Answers one request; it may sleep to simulate a slow server.
    /// - Returns: The running server.
    public static func start(tls: TestCertificate? = nil, _ handler: @escaping TestHandler) async throws -> TestServer {
        let connections = Connections()
        let sslContext = try tls.map { certificate in
            try NIOSSLContext(
                configuration: .makeServerConfiguration(
                    certificateChain: [
                        .certificate(try NIOSSLCertificate(bytes: Array(certificate.der), format: .der))
                    ],
                    privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(certificate.keyPEM), format: .pem))
                ))
        }
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 512)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                connections.opened(channel)
                return channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                    }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(
                        RequestHandler(handler: handler, connections: connections))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return TestServer(channel: channel, connections: connections, scheme: tls == nil ? "http" : "https")
    }

    /// Stops listening and closes every open connection.
    public func shutdown() async throws {
        try? await channel.close()
        for connection in connections.open {
            try? await connection.close()
        }
    }
}

/// The server's connections and counters.
private final class Connections: @unchecked Sendable {
    // Safe: every stored property is only touched while holding `lock`.
    private let lock = NSLock()
    private var channels: [ObjectIdentifier: any Channel] = [:]
    private var acceptedCount = 0
    private var requestCount = 0

    var accepted: Int { lock.withLock { acceptedCount } }
    var requests: Int { lock.withLock { requestCount } }
    var open: [any Channel] { lock.withLock { Array(channels.values) } }

    func opened(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        lock.withLock {
            acceptedCount += 1
            channels[id] = channel
        }
        channel.closeFuture.whenComplete { _ in
            _ = self.lock.withLock { self.channels.removeValue(forKey: id) }
        }
    }

    func received() {
        lock.withLock { requestCount += 1 }
    }
}

/// Collects each request and writes the handler's answer.
private final class RequestHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let handler: TestHandler
    private let connections: Connections
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()

    init(handler: @escaping TestHandler, connections: Connections) {
        self.handler = handler
        self.connections = connections
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.clear()
        case .body(var chunk):
            body.writeBuffer(&chunk)
        case .end:
            guard let head else { return }
            self.head = nil
            connections.received()
            let request = Self.request(head, body: Data(body.readableBytesView))
            let handler = self.handler
            let promise = context.eventLoop.makePromise(of: TestResponse.self)
            promise.completeWithTask { await handler(request) }
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            promise.futureResult.whenSuccess { response in
                let (handler, context) = bound.value
                handler.write(response, for: head, context: context)
            }
        }
    }

    private static func request(_ head: HTTPRequestHead, body: Data) -> TestRequest {
        let uri = head.uri
        let queryStart = uri.firstIndex(of: "?")
        let path = String(uri[..<(queryStart ?? uri.endIndex)])
        let query = queryStart.map { String(uri[uri.index(after: $0)...]) }
        var headers: [String: String] = [:]
        for (name, value) in head.headers {
            let key = name.lowercased()
            headers[key] = headers[key].map { $0 + ", " + value } ?? value
        }
        return TestRequest(method: head.method.rawValue, path: path, query: query, headers: headers, body: body)
    }

    private func write(_ response: TestResponse, for request: HTTPRequestHead, context: ChannelHandlerContext) {
        switch response.action {
        case .neverRespond:
            return
        case .close:
            context.close(promise: nil)
            return
        case .respond, .stream:
            break
        }
        var headers = HTTPHeaders(response.headers)
        if case .stream(let produce) = response.action {
            stream(
                produce,
                head: HTTPResponseHead(
                    version: request.version, status: HTTPResponseStatus(statusCode: response.status), headers: headers),
                context: context)
            return
        }
        let bodyless = response.status == 204 || response.status == 304 || (100..<200).contains(response.status)
        if !bodyless, !headers.contains(name: "Content-Length") {
            headers.add(name: "Content-Length", value: "\(response.body.count)")
        }
        let keepAlive = request.isKeepAlive
        if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        let head = HTTPResponseHead(
            version: request.version,
            status: HTTPResponseStatus(statusCode: response.status),
            headers: headers
        )
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !bodyless, request.method != .HEAD, !response.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
        }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            if !keepAlive { channel.close(promise: nil) }
        }
    }

    private func stream(
        _ produce: @escaping @Sendable (TestBodyWriter) async throws -> Void,
        head: HTTPResponseHead,
        context: ChannelHandlerContext
    ) {
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.head(head)), promise: nil)
        Task {
            do {
                try await produce(TestBodyWriter(channel: channel))
                try await channel.writeAndFlush(HTTPServerResponsePart.end(nil)).get()
            } catch {
                try? await channel.close()
            }
        }
    }
}

/// A self-signed certificate for `localhost` and 127.0.0.1, made with `openssl` at test time.
public struct TestCertificate: Sendable {
    /// The certificate, DER-encoded: what a client pins.
    public let der: Data
    /// The private key, PEM-encoded.
    public let keyPEM: Data

    /// Makes a new key and self-signed certificate with the `openssl` command.
    ///
    /// - Throws: When `openssl` is missing or fails.
    public static func make() throws -> TestCertificate {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("leash-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("key.pem").path
        let cert = directory.appendingPathComponent("cert.der").path
        try OpenSSL.run([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", key, "-out", cert, "-outform", "DER", "-days", "2", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-addext", "extendedKeyUsage=serverAuth",
        ])
        return TestCertificate(
            der: try Data(contentsOf: URL(fileURLWithPath: cert)),
            keyPEM: try Data(contentsOf: URL(fileURLWithPath: key)))
    }
}

/// The `openssl` command, for tests that make keys and certificates or check digests.
public enum OpenSSL {
    /// Runs `openssl` with `arguments`.
    ///
    /// - Throws: When `openssl` is missing or fails.
    public static func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "openssl failed: \(arguments)"])
        }
    }

    /// Runs `openssl` on `input` and returns what it writes, through temporary files: `dgst`
    /// is given the input file, the other commands `-in`; every command gets `-out`.
    ///
    /// - Throws: When `openssl` is missing or fails.
    public static func output(_ arguments: [String], input: Data? = nil) throws -> Data {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "leash-openssl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let inputFile = directory.appendingPathComponent("in")
        let outputFile = directory.appendingPathComponent("out")
        var files = ["-out", outputFile.path]
        if let input {
            try input.write(to: inputFile)
            files += arguments.first == "dgst" ? [inputFile.path] : ["-in", inputFile.path]
        }
        try run(arguments + files)
        return try Data(contentsOf: outputFile)
    }
}
