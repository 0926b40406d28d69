import Foundation
import LeashTestServer

/// A small API on 127.0.0.1, so the tour needs nothing else running.
///
/// - `POST /api/auth/login` `{"user","password"}` → `{"accessToken","refreshToken"}`
/// - `POST /api/auth/refresh` `{"refreshToken"}` → a new access token
/// - `GET /api/users?page=N`, `GET /api/users/{id}`, `POST /api/users` `{"name"}`
/// - `GET /api/status/flaky`: 503 with `Retry-After: 1` every other call
/// - `GET /api/status/slow`: answers after two seconds
/// - `GET /api/users/export`: every user as CSV, one line at a time, chunked
///
/// Access tokens expire `tokenLifetime` after they are issued; everything but `auth/*` needs one.
enum DemoServer {
    struct DemoUser: Codable, Sendable {
        var id: Int
        var name: String
    }

    /// The server's state, shared by the handlers.
    final class Store: @unchecked Sendable {
        // Safe: every stored property is only touched while holding `lock`.
        private let lock = NSLock()
        private var users = (1...45).map { DemoUser(id: $0, name: "User \($0)") }
        private var tokens: [String: ContinuousClock.Instant] = [:]
        private var issued = 0
        private var flakyCalls = 0
        let tokenLifetime: Duration

        init(tokenLifetime: Duration) {
            self.tokenLifetime = tokenLifetime
        }

        func issueToken() -> String {
            lock.withLock {
                issued += 1
                let token = "access-\(issued)"
                tokens[token] = .now + tokenLifetime
                return token
            }
        }

        func isValid(_ authorization: String?) -> Bool {
            guard let authorization, authorization.hasPrefix("Bearer ") else { return false }
            return lock.withLock { tokens[String(authorization.dropFirst(7))].map { $0 > .now } ?? false }
        }

        func page(_ page: Int, size: Int) -> [DemoUser] {
            lock.withLock { Array(users.dropFirst(max(page - 1, 0) * size).prefix(size)) }
        }

        func user(_ id: Int) -> DemoUser? {
            lock.withLock { users.first { $0.id == id } }
        }

        func create(name: String) -> DemoUser {
            lock.withLock {
                let user = DemoUser(id: (users.map(\.id).max() ?? 0) + 1, name: name)
                users.append(user)
                return user
            }
        }

        /// Fails every other call, as an overloaded server would.
        func flaky() -> Bool {
            lock.withLock {
                flakyCalls += 1
                return flakyCalls % 2 == 1
            }
        }
    }

    static func start(tokenLifetime: Duration = .seconds(2)) async throws -> TestServer {
        let store = Store(tokenLifetime: tokenLifetime)
        return try await TestServer.start { request in
            await handle(request, store: store)
        }
    }

    private static func error(_ message: String, status: Int, headers: [(String, String)] = []) -> TestResponse {
        .json(#"{"error":"\#(message)"}"#, status: status, headers: headers)
    }

    private static func handle(_ request: TestRequest, store: Store) async -> TestResponse {
        let segments = Array(request.path.split(separator: "/").map(String.init).dropFirst())  // drop "api"
        let body = (try? JSONSerialization.jsonObject(with: request.body)) as? [String: Any] ?? [:]
        switch (request.method, segments) {
        case ("POST", ["auth", "login"]):
            guard body["user"] as? String == "ada", body["password"] as? String == "lovelace" else {
                return error("wrong user or password", status: 401)
            }
            return .json(#"{"accessToken":"\#(store.issueToken())","refreshToken":"refresh-ada"}"#)
        case ("POST", ["auth", "refresh"]):
            guard body["refreshToken"] as? String == "refresh-ada" else {
                return error("unknown refresh token", status: 401)
            }
            return .json(#"{"accessToken":"\#(store.issueToken())","refreshToken":"refresh-ada"}"#)
        default:
            break
        }
        guard store.isValid(request.header("Authorization")) else {
            return error("expired or missing token", status: 401, headers: [("WWW-Authenticate", "Bearer")])
        }
        switch (request.method, segments) {
        case ("GET", ["users"]):
            let page = request.queryItems.first { $0.name == "page" }.flatMap { Int($0.value) } ?? 1
            return .json(store.page(page, size: 10))
        case ("GET", ["users", "export"]):
            let lines = ["id,name"] + (1...45).compactMap { store.user($0) }.map { "\($0.id),\($0.name)" }
            return TestResponse(
                status: 200, headers: [("Content-Type", "text/csv")],
                action: .stream { writer in
                    for line in lines {
                        try await writer.write(Data((line + "\n").utf8))
                        try await Task.sleep(for: .milliseconds(5))
                    }
                })
        case ("GET", let path) where path.count == 2 && path[0] == "users":
            guard let id = Int(path[1]), let user = store.user(id) else { return error("no such user", status: 404) }
            return .json(user)
        case ("POST", ["users"]):
            guard let name = body["name"] as? String, !name.isEmpty else {
                return error("a user needs a name", status: 422)
            }
            return .json(store.create(name: name), status: 201)
        case ("GET", ["status", "flaky"]):
            return store.flaky() ? error("busy", status: 503, headers: [("Retry-After", "1")]) : .json(#"{"ok":true}"#)
        case ("GET", ["status", "slow"]):
            try? await Task.sleep(for: .seconds(2))
            return .json(#"{"ok":true}"#)
        default:
            return error("not found", status: 404)
        }
    }
}
