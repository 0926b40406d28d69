import Foundation
import Leash
import LeashInterceptors
import LeashTestServer
import LeashTestSupport
import Testing

@testable import LeashInterceptors

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct RetryInterceptorTests {
    let stub = StubTransport()

    /// A retry interceptor that records its delays instead of sleeping.
    private func recordingRetry(_ retry: RetryInterceptor = RetryInterceptor()) -> (RetryInterceptor, Mutex<[Duration]>)
    {
        let delays = Mutex<[Duration]>([])
        var retry = retry
        retry.sleep = { delay in delays.withLock { $0.append(delay) } }
        return (retry, delays)
    }

    @Test func retryAfterSecondsReplacesTheJitteredDelay() async throws {
        stub.stub(.get, "busy", .status(503, headers: ["retry-after": "2"]), .json("{}"))
        let (retry, delays) = recordingRetry()
        let client = Client(manager: try makeManager(stub, interceptors: [retry]))
        _ = try await client.execute(TestEndpoint("busy"), as: Empty.self)
        #expect(delays.withLock { $0 } == [.seconds(2)])
        #expect(stub.requests.count == 2)
    }

    @Test func retryAfterIsCappedByMaxDelay() async throws {
        stub.stub(.get, "busy", .status(429, headers: ["Retry-After": "3600"]), .json("{}"))
        let (retry, delays) = recordingRetry(RetryInterceptor(maxDelay: .seconds(5)))
        _ = try await Client(manager: try makeManager(stub, interceptors: [retry]))
            .execute(TestEndpoint("busy"), as: Empty.self)
        #expect(delays.withLock { $0 } == [.seconds(5)])
    }

    @Test func retryAfterAsAnHTTPDate() throws {
        let retry = RetryInterceptor(maxDelay: .seconds(120))
        let date = Date().addingTimeInterval(30)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let head = HTTPURLResponse(
            url: URL(string: "https://api.test")!, statusCode: 503, httpVersion: nil,
            headerFields: ["Retry-After": formatter.string(from: date)])!
        let delay = try #require(retry.retryAfter(head))
        #expect(delay > .seconds(28) && delay <= .seconds(30))
        let past = HTTPURLResponse(
            url: URL(string: "https://api.test")!, statusCode: 503, httpVersion: nil,
            headerFields: ["Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"])!
        #expect(retry.retryAfter(past) == .zero)
    }

    @Test func backoffIsFullJitterUnderTheExponentialCeiling() {
        let retry = RetryInterceptor(baseDelay: .milliseconds(100), maxDelay: .milliseconds(1000))
        for (attempt, ceiling) in [(1, 100), (2, 200), (3, 400), (4, 800), (5, 1000), (9, 1000)] {
            let samples = (0..<200).map { _ in retry.backoff(retry: attempt) }
            #expect(samples.allSatisfy { $0 >= .zero && $0 <= .milliseconds(ceiling) })
            // Full jitter spreads over the range rather than sitting at the ceiling.
            #expect(Set(samples).count > 100)
            #expect(samples.contains { $0 < .milliseconds(ceiling / 2) })
        }
    }

    @Test func maxAttemptsCountsTheFirstAttempt() async throws {
        stub.stub(.get, "down", .failure(URLError(.networkConnectionLost)))
        let (retry, delays) = recordingRetry(RetryInterceptor(maxAttempts: 3))
        let response = await Client(manager: try makeManager(stub, interceptors: [retry]))
            .response(TestEndpoint("down"), as: Empty.self)
        #expect(name(of: response.error) == "transport")
        #expect(stub.requests.count == 3)
        #expect(delays.withLock { $0.count } == 2)
    }

    @Test func managerMaxRetriesStillBounds() async throws {
        stub.stub(.get, "down", .status(500))
        let (retry, _) = recordingRetry(RetryInterceptor(maxAttempts: 10))
        let response = await Client(manager: try makeManager(stub, interceptors: [retry]) { $0.maxRetries(2) })
            .response(TestEndpoint("down"), as: Empty.self)
        #expect(name(of: response.error) == "retryLimitExceeded(3)")
        #expect(stub.requests.count == 3)
    }

    @Test(arguments: [408, 429, 500, 502, 503, 504])
    func retriesTheseStatuses(status: Int) async throws {
        stub.stub(.get, "x", .status(status), .json("{}"))
        let (retry, _) = recordingRetry()
        _ = try await Client(manager: try makeManager(stub, interceptors: [retry])).execute(
            TestEndpoint("x"), as: Empty.self)
        #expect(stub.requests.count == 2)
    }

    @Test(arguments: [400, 401, 404, 501])
    func doesNotRetryOtherStatuses(status: Int) async throws {
        stub.stub(.get, "x", .status(status), .json("{}"))
        let (retry, _) = recordingRetry()
        let response = await Client(manager: try makeManager(stub, interceptors: [retry]))
            .response(TestEndpoint("x"), as: Empty.self)
        #expect(name(of: response.error) == "unacceptableStatusCode(\(status))")
        #expect(stub.requests.count == 1)
    }

    @Test func doesNotRetryPostUnlessConfigured() async throws {
        stub.stub(.post, "orders", .status(503), .json("{}"))
        let (retry, _) = recordingRetry()
        let response = await Client(manager: try makeManager(stub, interceptors: [retry]))
            .response(TestEndpoint("orders", .post), as: Empty.self)
        #expect(name(of: response.error) == "unacceptableStatusCode(503)")
        #expect(stub.requests.count == 1)

        stub.stub(.post, "orders", .status(503), .json("{}"))
        let (postRetry, _) = recordingRetry(RetryInterceptor(methods: [.post]))
        _ = try await Client(manager: try makeManager(stub, interceptors: [postRetry]))
            .execute(TestEndpoint("orders", .post), as: Empty.self)
        #expect(stub.requests.count == 3)
    }

    @Test func cancellationDuringBackoffEndsTheCallAtOnce() async throws {
        // The server asks for a 60 s wait, so "at once" is unmistakable even on a loaded machine.
        stub.stub(.get, "down", .status(503, headers: ["Retry-After": "60"]))
        let client = Client(manager: try makeManager(stub, interceptors: [RetryInterceptor(maxDelay: .seconds(60))]))
        let task = Task { try await client.execute(TestEndpoint("down"), as: Empty.self) }
        while stub.requests.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(20))
        let cancelledAt = ContinuousClock.now
        task.cancel()
        let result = try await withWatchdog(seconds: 20) { await task.result }
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(ContinuousClock.now - cancelledAt < .seconds(10))
        #expect(stub.requests.count == 1)
    }

    @Test func staticSugarRegistersTheInterceptor() throws {
        let manager = try Manager.Builder().url("https://api.test").add(interceptor: .retry(maxAttempts: 4)).build()
        #expect((manager.interceptors.first as? RetryInterceptor)?.maxAttempts == 4)
    }

    @Test func retryAfterAgainstARealServer() async throws {
        let hits = Counter()
        let server = try await TestServer.start { _ in
            hits.increment() == 0 ? .json(#"{"busy":true}"#, status: 503, headers: [("Retry-After", "1")]) : .json("{}")
        }
        let client = Client(
            manager: try Manager.Builder().url(server.baseURL).add(
                interceptor: .retry(baseDelay: .seconds(600), maxDelay: .seconds(600))
            ).build()
        )
        let started = ContinuousClock.now
        _ = try await withWatchdog(seconds: 20) { try await client.execute(TestEndpoint("x"), as: Empty.self) }
        let elapsed = ContinuousClock.now - started
        try await server.shutdown()
        #expect(hits.value == 2)
        // Waited for Retry-After (1 s), not for a jittered backoff of up to 600 s; the margin is
        // for a loaded two-core machine running the other suites at once.
        #expect(elapsed >= .seconds(1) && elapsed < .seconds(15))
    }
}
