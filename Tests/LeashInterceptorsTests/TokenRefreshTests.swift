import Foundation
import Leash
import LeashInterceptors
import LeashTestServer
import LeashTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A server whose tokens expire: only the token issued by the latest refresh is accepted.
final class TokenServer: Sendable {
    let refreshes = Counter()
    let meCalls = Counter()
    private let state = Mutex<(valid: String?, refusesEverything: Bool)>((nil, false))

    var valid: String? { state.withLock { $0.valid } }

    func refuseEverything() {
        state.withLock { $0.refusesEverything = true }
    }

    func handle(_ request: TestRequest) async -> TestResponse {
        switch request.path {
        case "/refresh":
            let number = refreshes.increment() + 1
            try? await Task.sleep(for: .milliseconds(50))
            let token = "t\(number)"
            state.withLock { $0.valid = token }
            return .json(#"{"token":"\#(token)"}"#)
        default:
            meCalls.increment()
            let (valid, refusing) = state.withLock { ($0.valid, $0.refusesEverything) }
            guard !refusing, let valid, request.header("Authorization") == "Bearer \(valid)" else {
                return .json(
                    #"{"error":"expired"}"#, status: 401,
                    headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)])
            }
            return .json(#"{"id":1,"name":"Ada"}"#)
        }
    }
}

struct TokenReply: Decodable, Sendable {
    var token: String
}

@Suite struct TokenRefreshTests {
    private func withTokenServer<T>(_ body: (TestServer, TokenServer) async throws -> T) async throws -> T {
        let tokens = TokenServer()
        let server = try await TestServer.start { await tokens.handle($0) }
        return try await run({ try await body(server, tokens) }, thenAlways: { try await server.shutdown() })
    }

    /// A client for the API, and the authenticator, refreshing through a plain client.
    private func apiClient(
        _ server: TestServer, maxRefreshes: Int = 3, refresh: (@Sendable (String?) async throws -> String)? = nil
    )
        throws -> (Client, TokenAuthenticator)
    {
        let authClient = Client(manager: try Manager.Builder().url(server.baseURL).build())
        let tokens = TokenAuthenticator(token: "t0", maxRefreshes: maxRefreshes) { expired in
            if let refresh { return try await refresh(expired) }
            return try await authClient.execute(TestEndpoint("refresh", .post), as: TokenReply.self).token
        }
        let manager = try Manager.Builder().url(server.baseURL).authenticator(tokens)
            .add(interceptor: TokenRefreshInterceptor(authenticator: tokens))
            .build()
        return (Client(manager: manager), tokens)
    }

    @Test func twoHundredExpiredCallsShareOneRefresh() async throws {
        try await withTokenServer { server, tokens in
            let (client, authenticator) = try apiClient(server)
            let started = ContinuousClock.now
            let users = try await withWatchdog(seconds: 60) {
                try await withThrowingTaskGroup(of: User.self) { group in
                    for _ in 0..<200 {
                        group.addTask { try await client.execute(TestEndpoint("me"), as: User.self) }
                    }
                    return try await group.reduce(into: [User]()) { $0.append($1) }
                }
            }
            let elapsed = ContinuousClock.now - started
            #expect(users.count == 200)
            #expect(users.allSatisfy { $0.name == "Ada" })
            #expect(tokens.refreshes.value == 1)
            #expect(await authenticator.token == "t1")
            #expect(await authenticator.version == 1)
            print(
                "refresh storm: 200 calls, \(tokens.refreshes.value) refresh, \(tokens.meCalls.value) API hits, \(elapsed)"
            )
        }
    }

    @Test func theRefreshClosureReceivesTheExpiredToken() async throws {
        try await withTokenServer { server, tokens in
            let received = Mutex<[String?]>([])
            let authClient = Client(manager: try Manager.Builder().url(server.baseURL).build())
            let (client, _) = try apiClient(server) { expired in
                received.withLock { $0.append(expired) }
                return try await authClient.execute(TestEndpoint("refresh", .post), as: TokenReply.self).token
            }
            _ = try await client.execute(TestEndpoint("me"), as: User.self)
            #expect(received.withLock { $0 } == ["t0"])
        }
    }

    @Test func aFailedRefreshFailsEveryWaitingCallThenALaterCallMayRefreshAgain() async throws {
        try await withTokenServer { server, tokens in
            let attempts = Counter()
            let authClient = Client(manager: try Manager.Builder().url(server.baseURL).build())
            let (client, _) = try apiClient(server) { _ in
                if attempts.increment() == 0 {
                    try await Task.sleep(for: .milliseconds(100))
                    throw TestError(code: 42)
                }
                return try await authClient.execute(TestEndpoint("refresh", .post), as: TokenReply.self).token
            }
            let errors = try await withWatchdog(seconds: 30) {
                await withTaskGroup(of: String.self) { group in
                    for _ in 0..<20 {
                        group.addTask { name(of: await client.response(TestEndpoint("me"), as: User.self).error) }
                    }
                    return await group.reduce(into: [String]()) { $0.append($1) }
                }
            }
            #expect(errors == Array(repeating: "authenticationFailed", count: 20))
            #expect(attempts.value == 1)
            // A call sent after the failure starts a new refresh, which succeeds.
            let user = try await client.execute(TestEndpoint("me"), as: User.self)
            #expect(user.name == "Ada")
            #expect(attempts.value == 2)
        }
    }

    @Test func tooManyRefreshesInTheWindowFailFast() async throws {
        try await withTokenServer { server, tokens in
            tokens.refuseEverything()
            let (client, _) = try apiClient(server, maxRefreshes: 2)
            let response = try await withWatchdog(seconds: 30) {
                await client.response(TestEndpoint("me"), as: User.self)
            }
            guard case LeashError.authenticationFailed(let reason)? = response.error else {
                Issue.record("expected authenticationFailed, got \(String(describing: response.error))")
                return
            }
            #expect("\(reason)".contains("more than 2 token refreshes"))
            #expect(tokens.refreshes.value == 2)
            #expect(tokens.meCalls.value == 3)
        }
    }

    @Test func aRefreshThatIsItself401EndsAsAuthenticationFailedNotADeadlock() async throws {
        try await withTokenServer { server, tokens in
            tokens.refuseEverything()
            // The refresh goes through the same client, interceptor included: the mistake the
            // documentation warns about.
            let holder = Mutex<Client?>(nil)
            let tokensAuth = TokenAuthenticator(token: "t0") { _ in
                let client = holder.withLock { $0 }!
                return try await client.execute(TestEndpoint("me"), as: TokenReply.self).token
            }
            let manager = try Manager.Builder().url(server.baseURL).authenticator(tokensAuth)
                .add(interceptor: TokenRefreshInterceptor(authenticator: tokensAuth)).build()
            let client = Client(manager: manager)
            holder.withLock { $0 = client }
            let response = try await withWatchdog(seconds: 20) {
                await client.response(TestEndpoint("me"), as: User.self)
            }
            #expect(name(of: response.error) == "authenticationFailed")
        }
    }

    @Test func cancellingOneWaitingCallDoesNotCancelTheSharedRefresh() async throws {
        try await withTokenServer { server, tokens in
            let authClient = Client(manager: try Manager.Builder().url(server.baseURL).build())
            let (client, _) = try apiClient(server) { _ in
                try await Task.sleep(for: .milliseconds(400))
                return try await authClient.execute(TestEndpoint("refresh", .post), as: TokenReply.self).token
            }
            let cancelled = Task { try await client.execute(TestEndpoint("me"), as: User.self) }
            let others = (0..<3).map { _ in Task { try await client.execute(TestEndpoint("me"), as: User.self) } }
            try await Task.sleep(for: .milliseconds(150))
            cancelled.cancel()
            let cancelledResult = try await withWatchdog(seconds: 5) { await cancelled.result }
            #expect(throws: CancellationError.self) { try cancelledResult.get() }
            for task in others {
                #expect(try await task.value.name == "Ada")
            }
            #expect(tokens.refreshes.value == 1)
        }
    }

    @Test func aCallWithAnOlderTokenIsRetriedWithoutRefreshing() async throws {
        let stub = StubTransport { request in
            let ok = request.value(forHTTPHeaderField: "Authorization") == "Bearer new"
            let head = HTTPURLResponse(
                url: request.url!, statusCode: ok ? 200 : 401, httpVersion: nil, headerFields: nil)!
            return (Data(#"{"id":1,"name":"Ada"}"#.utf8), head)
        }
        let refreshes = Counter()
        let tokens = TokenAuthenticator(token: "old") { _ in
            refreshes.increment()
            return "new"
        }
        let manager = try makeManager(stub, interceptors: [TokenRefreshInterceptor(authenticator: tokens)]) {
            $0.authenticator(tokens)
        }
        let client = Client(manager: manager)
        // The first 401 refreshes; a request that carried "old" after that is retried at once.
        _ = try await client.execute(TestEndpoint("me"), as: User.self)
        try await tokens.refreshIfNeeded(after: "Bearer old", sentAt: .now)
        #expect(refreshes.value == 1)
    }

    @Test func aRefusedStatusLetThroughAsSuccessIsRefreshedToo() async throws {
        try await withTokenServer { server, tokens in
            let authClient = Client(manager: try Manager.Builder().url(server.baseURL).build())
            let tokensAuth = TokenAuthenticator(token: "t0") { _ in
                try await authClient.execute(TestEndpoint("refresh", .post), as: TokenReply.self).token
            }
            let manager = try Manager.Builder().url(server.baseURL).authenticator(tokensAuth)
                .acceptableStatusCodes(nil)
                .add(interceptor: TokenRefreshInterceptor(authenticator: tokensAuth)).build()
            let user = try await Client(manager: manager).execute(TestEndpoint("me"), as: User.self)
            #expect(user.name == "Ada")
            #expect(tokens.refreshes.value == 1)
        }
    }
}
