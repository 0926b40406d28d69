import Foundation
import Leash
import LeashAsyncHTTPClient
import LeashTestServer
import LeashTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What reaches the wire, against a real HTTP server on 127.0.0.1, through each transport.
@Suite struct IntegrationTests {
    private func client(
        _ server: TestServer,
        _ transport: any Transport,
        configure: (Manager.Builder) -> Void = { _ in }
    ) throws -> Client {
        let builder = Manager.Builder().url(server.baseURL).transport(transport)
        configure(builder)
        return Client(manager: try builder.build())
    }

    /// Runs `body` against the echo server through a transport of `kind`.
    private func withEcho(
        _ kind: TransportKind,
        configuration: AsyncHTTPClientTransport.Configuration = .init(),
        _ body: (TestServer, any Transport) async throws -> Void
    ) async throws {
        try await withTransport(kind, configuration: configuration) { transport in
            try await withEchoServer { server in try await body(server, transport) }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func queryStringOnTheWire(kind: TransportKind) async throws {
        try await withEcho(kind) { server, transport in
            let parameters: [String: Any] = ["q": "a b+c&d", "ids": [1, 2], "filter": ["name": "ada"], "on": true]
            let echo = try await client(server, transport).execute(
                TestEndpoint("echo?sort=asc", parameters: parameters), as: Echo.self)
            #expect(echo.path == "/echo")
            #expect(
                echo.query == "sort=asc&filter%5Bname%5D=ada&ids%5B%5D=1&ids%5B%5D=2&on=true&q=a%20b%2Bc%26d")
            let items = TestRequest(method: "GET", path: "", query: echo.query, headers: [:], body: Data())
                .queryItems
            #expect(items.map(\.name) == ["sort", "filter[name]", "ids[]", "ids[]", "on", "q"])
            #expect(items.last?.value == "a b+c&d")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func jsonBodyAndHeadersOnTheWire(kind: TransportKind) async throws {
        try await withTransport(kind) { transport in
            struct Key: Authenticator {
                static let header = "Authorization"
                var authentication: String? { "Bearer abc" }
            }
            try await withEchoServer { server in
                let client = try client(server, transport) {
                    $0.header("User-Agent", "LeashTests/1.0").authenticator(Key())
                }
                let echo = try await client.execute(
                    TestEndpoint("echo", .post, parameters: User(id: 5, name: "Ada"), headers: ["X-Trace": "t-1"]),
                    as: Echo.self)
                #expect(echo.method == "POST")
                #expect(echo.body == #"{"id":5,"name":"Ada"}"# || echo.body == #"{"name":"Ada","id":5}"#)
                #expect(echo.headers["content-type"] == "application/json")
                #expect(echo.headers["user-agent"] == "LeashTests/1.0")
                #expect(echo.headers["x-trace"] == "t-1")
                #expect(echo.headers["authorization"] == "Bearer abc")
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func multipartOnTheWire(kind: TransportKind) async throws {
        try await withEcho(kind) { server, transport in
            var form = MultipartFormData()
            form.append("Ada", name: "name")
            form.append(Data("file body".utf8), name: "doc", fileName: "a.txt", mimeType: "text/plain")
            let echo = try await client(server, transport).execute(
                TestEndpoint("echo", .post, parameters: form), as: Echo.self)
            #expect(echo.headers["content-type"] == form.contentType)
            #expect(echo.body == String(decoding: try form.encode(), as: UTF8.self))
            #expect(echo.headers["content-length"] == "\(try form.encode().count)")
        }
    }

    @Test(arguments: TransportKind.allCases, ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "PURGE"])
    func everyMethodReachesTheServer(kind: TransportKind, method: String) async throws {
        try await withEcho(kind) { server, transport in
            let echo = try await client(server, transport).execute(
                TestEndpoint("echo", HTTPMethod(method)), as: Echo.self)
            #expect(echo.method == method)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func redirectsAreFollowed(kind: TransportKind) async throws {
        try await withEcho(kind) { server, transport in
            let echo = try await client(server, transport).execute(TestEndpoint("redirect"), as: Echo.self)
            #expect(echo.path == "/echo")
            #expect(echo.query == "redirected=1")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func headHasNoBody(kind: TransportKind) async throws {
        try await withEcho(kind) { server, transport in
            let (data, http) = try await client(server, transport).data(TestEndpoint("echo", .head))
            #expect(http.statusCode == 200)
            #expect(data.isEmpty)
            #expect(server.requestCount == 1)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func noContentDecodesAsEmpty(kind: TransportKind) async throws {
        try await withEcho(kind) { server, transport in
            let client = try client(server, transport)
            _ = try await client.execute(TestEndpoint("status/204", .delete), as: Empty.self)
            let response = await client.response(TestEndpoint("status/204"), as: User.self)
            #expect(name(of: response.error) == "decoding")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func unacceptableStatusCarriesResponseAndBody(kind: TransportKind) async throws {
        try await withEcho(kind) { server, transport in
            let response = try await client(server, transport).response(TestEndpoint("status/503"), as: Echo.self)
            guard case LeashError.unacceptableStatusCode(503, let http, let data)? = response.error else {
                Issue.record("expected 503, got \(String(describing: response.error))")
                return
            }
            #expect(http.statusCode == 503)
            #expect(String(decoding: data, as: UTF8.self) == #"{"status":503}"#)
        }
    }

    /// 0.5 s takes the transport's own deadline; 1 s is left to URLSession's, which counts whole
    /// seconds on Linux.
    @Test(arguments: TransportKind.allCases, [0.5, 1.0])
    func timeoutIsLeashTimedOut(kind: TransportKind, seconds: Double) async throws {
        try await withEcho(kind) { server, transport in
            let client = try client(server, transport) { $0.timeout(seconds) }
            let started = ContinuousClock.now
            let response = try await withWatchdog(seconds: 25) {
                await client.response(TestEndpoint("slow/30000"), as: Empty.self)
            }
            #expect(name(of: response.error) == "timedOut")
            // Long before the server's answer at 30 s; the margin is for a loaded two-core machine.
            #expect(ContinuousClock.now - started < .seconds(15))
        }
    }

    @Test(arguments: TransportKind.allCases)
    func cancellationIsCancellationError(kind: TransportKind) async throws {
        try await withEcho(kind) { server, transport in
            let client = try client(server, transport)
            let task = Task { try await client.execute(TestEndpoint("hang"), as: Empty.self) }
            try await Task.sleep(for: .milliseconds(200))
            let cancelledAt = ContinuousClock.now
            task.cancel()
            let outcome = try await withWatchdog(seconds: 20) { await task.result }
            #expect(throws: CancellationError.self) { try outcome.get() }
            // The server never answers; the margin is for a loaded two-core machine.
            #expect(ContinuousClock.now - cancelledAt < .seconds(10))
        }
    }

    @Test(arguments: TransportKind.allCases)
    func basicChallengeReturnsThe401InsteadOfHanging(kind: TransportKind) async throws {
        try await withEcho(kind) { server, transport in
            let client = try client(server, transport)
            let response = try await withWatchdog(seconds: 10) {
                await client.response(TestEndpoint("basic"), as: Empty.self)
            }
            guard case LeashError.unacceptableStatusCode(401, let http, _)? = response.error else {
                Issue.record("expected 401, got \(String(describing: response.error))")
                return
            }
            #expect(http.value(forHTTPHeaderField: "WWW-Authenticate") == #"Basic realm="leash""#)
            // The connection is still usable afterwards.
            let echo = try await client.execute(TestEndpoint("echo"), as: Echo.self)
            #expect(echo.method == "GET")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func threeHundredConcurrentCalls(kind: TransportKind) async throws {
        // 300 calls share 8 connections: on a loaded machine the last wait longer for a free
        // connection than AsyncHTTPClient's default 10 s (URLSession queues them without limit).
        try await withEcho(kind, configuration: .init(connectTimeout: .seconds(60))) { server, transport in
            let client = try client(server, transport)
            let queries = try await withWatchdog(seconds: 60) {
                try await withThrowingTaskGroup(of: String?.self) { group in
                    for index in 0..<300 {
                        group.addTask {
                            try await client.execute(TestEndpoint("echo", parameters: ["i": index]), as: Echo.self)
                                .query
                        }
                    }
                    var seen: [String?] = []
                    for try await query in group { seen.append(query) }
                    return seen
                }
            }
            #expect(Set(queries) == Set((0..<300).map { "i=\($0)" }))
            #expect(server.requestCount == 300)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func connectionsAreKeptAlive(kind: TransportKind) async throws {
        try await withEcho(kind) { server, transport in
            let client = try client(server, transport)
            for _ in 0..<20 {
                _ = try await client.execute(TestEndpoint("echo"), as: Echo.self)
            }
            #expect(server.requestCount == 20)
            #expect(server.connectionCount == 1)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func refusedConnectionIsATransportError(kind: TransportKind) async throws {
        try await withTransport(kind) { transport in
            let server = try await TestServer.start { _ in .status(200) }
            let url = server.baseURL
            try await server.shutdown()
            let client = Client(manager: try Manager.Builder().url(url).transport(transport).build())
            let response = try await withWatchdog(seconds: 10) {
                await client.response(TestEndpoint("echo"), as: Empty.self)
            }
            #expect(name(of: response.error) == "transport")
        }
    }
}
