import Foundation
import Leash
import LeashInterceptors
import LeashTestServer
import LeashTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A server whose `/items` body changes on every hit, with validators.
final class VersionedServer: Sendable {
    let hits = Counter()
    let conditional = Mutex<[String]>([])
    let failing = Mutex(false)

    func handle(_ request: TestRequest) -> TestResponse {
        let hit = hits.increment() + 1
        if failing.withLock({ $0 }) { return .json(#"{"error":"down"}"#, status: 503) }
        if let tag = request.header("If-None-Match") {
            conditional.withLock { $0.append("If-None-Match: \(tag)") }
            if tag == #""v1""# { return .status(304, headers: [("ETag", #""v1""#)]) }
        }
        if let since = request.header("If-Modified-Since") {
            conditional.withLock { $0.append("If-Modified-Since: \(since)") }
            return .status(304)
        }
        let headers: [(String, String)] =
            request.path.hasSuffix("dated")
            ? [("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT")] : [("ETag", #""v1""#)]
        return .json(#"{"hit":\#(hit)}"#, headers: headers)
    }
}

struct Hit: Decodable, Sendable, Equatable {
    var hit: Int
}

@Suite struct CacheInterceptorTests {
    private func withServer<T>(
        _ policy: CachePolicy,
        paths: [PathPattern] = [],
        _ body: (Client, VersionedServer) async throws -> T
    ) async throws -> T {
        let versioned = VersionedServer()
        let server = try await TestServer.start { versioned.handle($0) }
        let manager = try Manager.Builder().url(server.baseURL + "/api")
            .add(interceptor: CacheInterceptor(policy: policy, paths: paths)).build()
        return try await run(
            { try await body(Client(manager: manager), versioned) }, thenAlways: { try await server.shutdown() })
    }

    private func deliveries(_ client: Client, _ path: String) async -> [(hit: Int?, cached: Bool)] {
        var all: [(Int?, Bool)] = []
        for await delivery in client.responses(TestEndpoint(path), as: Hit.self) {
            all.append((delivery.value?.hit, CacheInterceptor.isCached(delivery.extra)))
        }
        return all
    }

    @Test func cacheAndRenewDeliversTheStoredResponseThenAFreshOne() async throws {
        try await withServer(.cacheAndRenew) { client, server in
            let first = await deliveries(client, "items")
            #expect(first.map(\.hit) == [1])
            #expect(first.map(\.cached) == [false])
            let second = await deliveries(client, "items")
            #expect(second.map(\.hit) == [1, 2])
            #expect(second.map(\.cached) == [true, false])
            #expect(server.hits.value == 2)
        }
    }

    @Test func cacheOnlyOnErrorAnswersFromTheStoreWhenTheServerFails() async throws {
        try await withServer(.cacheOnlyOnError) { client, server in
            let fresh = try await client.execute(TestEndpoint("items"), as: Hit.self)
            server.failing.withLock { $0 = true }
            let response = await client.response(TestEndpoint("items"), as: Hit.self)
            #expect(response.value == fresh)
            #expect(CacheInterceptor.isCached(response.extra))
            #expect(server.hits.value == 2)
            // Nothing stored for this path: the error comes through.
            let other = await client.response(TestEndpoint("other"), as: Hit.self)
            #expect(name(of: other.error) == "unacceptableStatusCode(503)")
        }
    }

    @Test func timeToLiveServesFromTheStoreWithoutTheNetworkUntilItExpires() async throws {
        try await withServer(.timeToLive(.milliseconds(300))) { client, server in
            let first = try await client.execute(TestEndpoint("items"), as: Hit.self)
            let second = await client.response(TestEndpoint("items"), as: Hit.self)
            #expect(second.value == first)
            #expect(CacheInterceptor.isCached(second.extra))
            #expect(server.hits.value == 1)
            try await Task.sleep(for: .milliseconds(400))
            let third = try await client.execute(TestEndpoint("items"), as: Hit.self)
            #expect(third.hit == 2)
            #expect(server.hits.value == 2)
        }
    }

    @Test func validationSendsIfNoneMatchAndAnswersA304FromTheStore() async throws {
        try await withServer(.validation) { client, server in
            let first = try await client.execute(TestEndpoint("items"), as: Hit.self)
            let second = await client.response(TestEndpoint("items"), as: Hit.self)
            #expect(second.value == first)
            #expect(CacheInterceptor.isCached(second.extra))
            #expect((second.extra as? HTTPURLResponse)?.statusCode == 200)
            #expect(server.conditional.withLock { $0 } == [#"If-None-Match: "v1""#])
            #expect(server.hits.value == 2)
        }
    }

    @Test func validationWithLastModified() async throws {
        try await withServer(.validation) { client, server in
            let first = try await client.execute(TestEndpoint("dated"), as: Hit.self)
            let second = try await client.execute(TestEndpoint("dated"), as: Hit.self)
            #expect(second == first)
            #expect(server.conditional.withLock { $0 } == ["If-Modified-Since: Wed, 21 Oct 2015 07:28:00 GMT"])
        }
    }

    @Test func onlyMatchingPathsAndGetAreCached() async throws {
        try await withServer(.timeToLive(.seconds(60)), paths: ["items/*"]) { client, server in
            _ = try await client.execute(TestEndpoint("items/1"), as: Hit.self)
            _ = try await client.execute(TestEndpoint("items/1"), as: Hit.self)
            #expect(server.hits.value == 1)
            _ = try await client.execute(TestEndpoint("items"), as: Hit.self)
            _ = try await client.execute(TestEndpoint("items"), as: Hit.self)
            #expect(server.hits.value == 3)
            _ = try await client.execute(TestEndpoint("items/1", .post), as: Hit.self)
            _ = try await client.execute(TestEndpoint("items/1", .post), as: Hit.self)
            #expect(server.hits.value == 5)
        }
    }

    @Test func pathPatterns() {
        #expect(PathPattern("users/*").matches("users/7"))
        #expect(!PathPattern("users/*").matches("users/7/posts"))
        #expect(PathPattern("users/**").matches("users/7/posts"))
        #expect(PathPattern("users/**").matches("users"))
        #expect(PathPattern("**/posts").matches("users/7/posts"))
        #expect(!PathPattern("users").matches("items"))
        #expect(PathPattern("/users/").matches("/users"))
    }

    @Test func memoryStoreEvictsTheLeastRecentlyUsedBeyondItsByteLimit() async {
        let store = MemoryStore(byteLimit: 300)
        func entry(_ size: Int) -> CacheEntry {
            CacheEntry(url: "u", statusCode: 200, headers: [:], data: Data(repeating: 1, count: size))
        }
        await store.store(entry(100), for: "a")
        await store.store(entry(100), for: "b")
        _ = await store.entry(for: "a")  // "a" is now the most recently used
        await store.store(entry(100), for: "c")
        #expect(await store.entry(for: "b") == nil)
        #expect(await store.entry(for: "a") != nil)
        #expect(await store.entry(for: "c") != nil)
        #expect(await store.totalCost <= 300)
        await store.store(entry(1000), for: "huge")
        #expect(await store.entry(for: "huge") == nil)
        await store.removeAll()
        #expect(await store.count == 0)
    }

    @Test func fileStoreRoundTripsAndIgnoresDamagedFiles() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("leash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileStore(directory: directory)
        let entry = CacheEntry(
            url: "https://api.test/x", statusCode: 200, headers: ["ETag": "\"v\""], data: Data("body\nwith lines".utf8),
            storedAt: Date(timeIntervalSince1970: 1000))
        await store.store(entry, for: "GET https://api.test/x")
        #expect(await store.entry(for: "GET https://api.test/x") == entry)
        #expect(await FileStore(directory: directory).entry(for: "GET https://api.test/x") == entry)
        #expect(await store.entry(for: "GET https://api.test/y") == nil)
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
        try Data("garbage".utf8).write(to: files[0])
        #expect(await store.entry(for: "GET https://api.test/x") == nil)
        await store.removeAll()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test func cacheWithAFileStoreServesAcrossManagers() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("leash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let versioned = VersionedServer()
        let server = try await TestServer.start { versioned.handle($0) }
        func client() throws -> Client {
            Client(
                manager: try Manager.Builder().url(server.baseURL)
                    .add(
                        interceptor: CacheInterceptor(
                            policy: .timeToLive(.seconds(60)), store: FileStore(directory: directory))
                    )
                    .build())
        }
        let first = try await client().execute(TestEndpoint("items"), as: Hit.self)
        let second = try await client().execute(TestEndpoint("items"), as: Hit.self)
        try await server.shutdown()
        #expect(first == second)
        #expect(versioned.hits.value == 1)
    }
}
