import Foundation
import Leash
import LeashInterceptors
import LeashLogging
import LeashTestServer
import LeashTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Many calls at once through retry, token refresh and logging, against a server whose tokens
/// expire every second; and many calls cancelled at random moments.
///
/// The default run makes 2,000 calls per transport; `LEASH_LONG=1` makes 10,000.
@Suite struct LoadTests {
    static let isLong = ProcessInfo.processInfo.environment["LEASH_LONG"] == "1"

    @Test(arguments: TransportKind.allCases)
    func callsThroughExpiringTokensAllSucceedWithARefreshPerSecond(kind: TransportKind) async throws {
        let calls = Self.isLong ? 10_000 : 2_000
        let api = ExpiringTokenServer(lifetime: .seconds(1))
        let server = try await TestServer.start { await api.handle($0) }
        try await run(
            {
                try await withTransport(kind, configuration: .init(maximumConnectionsPerHost: 64)) { transport in
                    let refresher = Client(
                        manager: try Manager.Builder().url(server.baseURL).transport(transport).build())
                    let tokens = TokenAuthenticator(token: nil, maxRefreshes: 5, window: .seconds(1)) { _ in
                        try await refresher.execute(TestEndpoint("refresh", .post), as: [String: String].self)["token"]!
                    }
                    let lines = Counter()
                    // Token refreshes count as attempts too. On a machine so loaded that an attempt
                    // takes longer than a token lives, a call can meet an expired token more than
                    // once: room for several 401s and 503s.
                    let manager = try Manager.Builder().url(server.baseURL).transport(transport).authenticator(tokens)
                        .maxRetries(12)
                        .add(interceptor: TokenRefreshInterceptor(authenticator: tokens))
                        .add(interceptor: RetryInterceptor(maxAttempts: 13, baseDelay: .milliseconds(20)))
                        .add(interceptor: LoggerInterceptor(logger: CountingLogger(lines: lines), level: .minimal))
                        .build()
                    let client = Client(manager: manager)
                    let failures = Mutex<[String]>([])
                    let rss = Mutex<[Double]>([residentMiB()])
                    let start = ContinuousClock.now
                    try await withWatchdog(seconds: Self.isLong ? 300 : 120) {
                        try await inParallel(calls, width: 64) { index in
                            if index % (calls / 5) == 0, index > 0 { rss.withLock { $0.append(residentMiB()) } }
                            do {
                                _ = try await client.execute(TestEndpoint("work"), as: [String: Int].self)
                            } catch {
                                failures.withLock { $0.append("\(error)") }
                            }
                        }
                    }
                    rss.withLock { $0.append(residentMiB()) }
                    let samples = rss.withLock { $0 }
                    let elapsed = ContinuousClock.now - start
                    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                    let refreshes = api.refreshes.value
                    print(
                        "load | \(kind) | \(calls) calls at 64 in flight | \(String(format: "%.1f", seconds)) s | "
                            + "\(refreshes) refreshes | \(api.expired.value) 401s | \(api.busy.value) 503s retried | "
                            + "\(lines.value) log lines | RSS every \(calls / 5) calls \(samples.map { String(format: "%.0f", $0) }) MiB | "
                            + "\(failures.withLock { $0.count }) failures")
                    #expect(failures.withLock { $0 } == [])
                    // One refresh per expiry, not per call: at most about one a second. (Fewer
                    // when the machine is so loaded that a second passes without a call.)
                    #expect(refreshes >= 1)
                    #expect(refreshes <= Int(seconds.rounded(.up)) + 2)
                    #expect(lines.value >= calls)
                    if Self.isLong {
                        // Flat once warm: from a fifth of the way to the end, memory does not
                        // keep growing with the number of calls. (Only measured in the long run,
                        // alone: in the default run other suites allocate in the same process.)
                        #expect(samples.last! - samples[1] < 16)
                    }
                }
            }, thenAlways: { try await server.shutdown() })
    }

    @Test(arguments: TransportKind.allCases)
    func callsCancelledAtRandomMomentsEndOnceWithCancellationError(kind: TransportKind) async throws {
        let calls = 1_000
        try await withEchoServer { server in
            try await withTransport(kind, configuration: .init(maximumConnectionsPerHost: 64)) { transport in
                let client = Client(manager: try Manager.Builder().url(server.baseURL).transport(transport).build())
                let deliveries = Mutex([Int](repeating: 0, count: calls))
                let outcomes = Mutex<[String: Int]>([:])
                try await withWatchdog(seconds: 60) {
                    try await inParallel(calls, width: 100) { index in
                        // The server answers after 200 ms; the call is cancelled well before.
                        let handle = client.execute(TestEndpoint("slow/200"), as: [String: Int].self) { response in
                            deliveries.withLock { $0[index] += 1 }
                            let outcome =
                                switch response.result {
                                case .success: "success"
                                case .failure(let error): "\(type(of: error))"
                                }
                            outcomes.withLock { $0[outcome, default: 0] += 1 }
                        }
                        try await Task.sleep(for: .microseconds(Int.random(in: 0..<100_000)))
                        handle.cancel()
                        await handle.wait()
                    }
                }
                // Anything delivered late would show here.
                try await Task.sleep(for: .milliseconds(500))
                #expect(deliveries.withLock { $0 }.allSatisfy { $0 == 1 })
                #expect(outcomes.withLock { $0 } == ["CancellationError": calls])
                print("cancel | \(kind) | \(calls) calls | outcomes \(outcomes.withLock { $0 })")
            }
        }
    }
}

/// Issues tokens that expire after `lifetime`; answers 1 call in 100 with a 503.
final class ExpiringTokenServer: Sendable {
    let refreshes = Counter()
    let expired = Counter()
    let busy = Counter()
    private let lifetime: Duration
    private let current = Mutex<(token: String, expires: ContinuousClock.Instant)?>(nil)

    init(lifetime: Duration) {
        self.lifetime = lifetime
    }

    func handle(_ request: TestRequest) async -> TestResponse {
        if request.path == "/refresh" {
            let number = refreshes.increment() + 1
            let token = "t\(number)"
            current.withLock { $0 = (token, .now + lifetime) }
            return .json(#"{"token":"\#(token)"}"#)
        }
        let valid = current.withLock { current in
            current.map { request.header("Authorization") == "Bearer \($0.token)" && ContinuousClock.now < $0.expires }
                ?? false
        }
        guard valid else {
            expired.increment()
            return .json(#"{"error":"expired"}"#, status: 401, headers: [("WWW-Authenticate", "Bearer")])
        }
        if Int.random(in: 0..<100) == 0 {
            busy.increment()
            return .json(#"{"error":"busy"}"#, status: 503)
        }
        return .json(#"{"ok":1}"#)
    }
}

/// Counts the lines it is given.
struct CountingLogger: LeashLogging.Logger {
    let lines: Counter

    func log(message: String) {
        lines.increment()
    }

    func log(error: any Error) {
        lines.increment()
    }
}

/// Runs `body` for 0..<count with at most `width` running at once.
func inParallel(_ count: Int, width: Int, _ body: @escaping @Sendable (Int) async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        var next = 0
        while next < min(width, count) {
            let index = next
            group.addTask { try await body(index) }
            next += 1
        }
        while try await group.next() != nil {
            if next < count {
                let index = next
                group.addTask { try await body(index) }
                next += 1
            }
        }
    }
}

/// The process's resident memory, in MiB.
func residentMiB() -> Double {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
        let pages = statm.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
    else { return 0 }
    return pages * 4096 / 1_048_576
}
