import Foundation
import LeashTestServer

/// A small users API on 127.0.0.1, so the tour needs nothing else running.
enum DemoServer {
    struct DemoUser: Codable, Sendable {
        var id: Int
        var name: String
    }

    /// State shared by the handlers: the users and the flaky endpoint's counter.
    final class Store: @unchecked Sendable {
        // Safe: every stored property is only touched while holding `lock`.
        private let lock = NSLock()
        private var users = (1...45).map { DemoUser(id: $0, name: "User \($0)") }
        private var flakyCalls = 0

        func page(_ page: Int, size: Int) -> [DemoUser] {
            lock.withLock { Array(users.dropFirst((page - 1) * size).prefix(size)) }
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

        /// Fails every other call with 503, as an overloaded server would.
        func flaky() -> Bool {
            lock.withLock {
                flakyCalls += 1
                return flakyCalls % 2 == 1
            }
        }
    }

    static func start() async throws -> TestServer {
        let store = Store()
        return try await TestServer.start { request in
            let segments = request.path.split(separator: "/").map(String.init)
            guard request.header("Authorization") == "Bearer demo-token" else {
                return .json(#"{"error":"missing or wrong token"}"#, status: 401)
            }
            switch (request.method, segments) {
            case ("GET", ["api", "users"]):
                let page = request.queryItems.first { $0.name == "page" }.flatMap { Int($0.value) } ?? 1
                return .json(store.page(page, size: 10))
            case ("GET", let path) where path.count == 3 && path[1] == "users":
                guard let id = Int(path[2]), let user = store.user(id) else {
                    return .json(#"{"error":"no such user"}"#, status: 404)
                }
                return .json(user)
            case ("POST", ["api", "users"]):
                struct NewUser: Decodable { var name: String }
                guard let new = try? JSONDecoder().decode(NewUser.self, from: request.body) else {
                    return .json(#"{"error":"body must be {\"name\": …}"}"#, status: 400)
                }
                return .json(store.create(name: new.name), status: 201)
            case ("GET", ["api", "flaky"]):
                return store.flaky() ? .json(#"{"error":"busy"}"#, status: 503) : .json(#"{"ok":true}"#)
            default:
                return .json(#"{"error":"not found"}"#, status: 404)
            }
        }
    }
}
