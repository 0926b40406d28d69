import Foundation
import Leash
import LeashInterceptors
import LeashTestServer
import LeashTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct DeduplicationInterceptorTests {
    @Test func fiftyIdenticalGetsShareOneServerHit() async throws {
        let hits = Counter()
        let deduplication = DeduplicationInterceptor()
        // The leader's answer waits until the 49 others are waiting for it, however slowly a
        // loaded machine runs the 50 tasks.
        let server = try await TestServer.start { _ in
            let hit = hits.increment() + 1
            for _ in 0..<2000 where await deduplication.waitingCount() < 49 {
                try? await Task.sleep(for: .milliseconds(10))
            }
            return .json(#"{"id":\#(hit),"name":"Ada"}"#)
        }
        let client = Client(
            manager: try Manager.Builder().url(server.baseURL).add(interceptor: deduplication).build())
        let users = try await withWatchdog(seconds: 30) {
            try await withThrowingTaskGroup(of: User.self) { group in
                for _ in 0..<50 {
                    group.addTask { try await client.execute(TestEndpoint("users/1"), as: User.self) }
                }
                return try await group.reduce(into: [User]()) { $0.append($1) }
            }
        }
        try await server.shutdown()
        #expect(users.count == 50)
        #expect(Set(users.map(\.id)) == [1])
        #expect(hits.value == 1)
    }

    @Test func differentRequestsAreNotCoalesced() async throws {
        let hits = Counter()
        let server = try await TestServer.start { _ in
            hits.increment()
            try? await Task.sleep(for: .milliseconds(100))
            return .json("{}")
        }
        let client = Client(
            manager: try Manager.Builder().url(server.baseURL).add(interceptor: DeduplicationInterceptor()).build())
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { _ = try await client.execute(TestEndpoint("a"), as: Empty.self) }
            group.addTask { _ = try await client.execute(TestEndpoint("b"), as: Empty.self) }
            group.addTask { _ = try await client.execute(TestEndpoint("a", headers: ["X-V": "2"]), as: Empty.self) }
            group.addTask { _ = try await client.execute(TestEndpoint("a", .post), as: Empty.self) }
            try await group.waitForAll()
        }
        try await server.shutdown()
        #expect(hits.value == 4)
    }

    @Test func whenTheLeaderIsCancelledTheFollowersGoToTheNetwork() async throws {
        let hits = Counter()
        let server = try await TestServer.start { _ in
            hits.increment()
            try? await Task.sleep(for: .milliseconds(300))
            return .json(#"{"id":1,"name":"Ada"}"#)
        }
        let client = Client(
            manager: try Manager.Builder().url(server.baseURL).add(interceptor: DeduplicationInterceptor()).build())
        let leader = Task { try await client.execute(TestEndpoint("users/1"), as: User.self) }
        try await Task.sleep(for: .milliseconds(50))
        let followers = (0..<3).map { _ in Task { try await client.execute(TestEndpoint("users/1"), as: User.self) } }
        try await Task.sleep(for: .milliseconds(50))
        leader.cancel()
        await #expect(throws: CancellationError.self) { try await leader.value }
        for follower in followers {
            let user = try await withWatchdog(seconds: 10) { try await follower.value }
            #expect(user.name == "Ada")
        }
        try await server.shutdown()
        #expect(hits.value >= 2)
    }

    @Test func aCancelledFollowerEndsAloneWithCancellationError() async throws {
        // The leader's answer waits until the follower has joined, been cancelled and ended,
        // however slowly a loaded machine runs the tasks.
        let released = Counter()
        let stub = StubTransport { request in
            for _ in 0..<2000 where released.value == 0 {
                try? await Task.sleep(for: .milliseconds(10))
            }
            let head = HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: nil)!
            return (Data(#"{"id":1,"name":"Ada"}"#.utf8), head)
        }
        let deduplication = DeduplicationInterceptor()
        let client = Client(manager: try makeManager(stub, interceptors: [deduplication]))
        let leader = Task { try await client.execute(TestEndpoint("slow"), as: User.self) }
        try await withWatchdog(seconds: 10) {
            while stub.requests.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        }
        let follower = Task { try await client.execute(TestEndpoint("slow"), as: User.self) }
        try await withWatchdog(seconds: 10) {
            while await deduplication.waitingCount() == 0 { try await Task.sleep(for: .milliseconds(5)) }
        }
        follower.cancel()
        let result = try await withWatchdog(seconds: 5) { await follower.result }
        released.increment()
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(try await leader.value.name == "Ada")
        #expect(stub.requests.count == 1)
    }
}
