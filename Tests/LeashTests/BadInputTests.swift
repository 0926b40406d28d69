import Foundation
import Leash
import LeashTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Input no one should send or receive: each ends as a clear `LeashError`, never a crash, and
/// nothing dangerous reaches the transport.
@Suite struct BadInputTests {
    /// An authenticator whose value carries a line break.
    struct InjectingAuthenticator: Authenticator {
        static let header = "Authorization"
        var authentication: String? { get async { "Bearer x\r\nX-Injected: 1" } }
    }

    @Test func anInterceptorsHeaderNameWithALineBreakIsRefusedNotSent() async throws {
        let stub = StubTransport()
        // Foundation keeps a header *name* with a line break (it drops such values itself).
        let injector = Probe(name: "inject", recorder: Recorder()) { chain in
            var request = chain.request
            request.setValue("1", forHTTPHeaderField: "X-Trace: 1\r\nX-Injected")
            chain.proceed(with: request)
        }
        let client = Client(manager: try makeManager(stub, interceptors: [injector]))
        let error = await #expect(throws: LeashError.self) { try await client.data(TestEndpoint("u")) }
        #expect(error?.caseName == "encoding")
        #expect(stub.requests.isEmpty)
    }

    @Test func anInterceptorsHeaderValueWithALineBreakNeverReachesTheTransport() async throws {
        let stub = StubTransport()
        stub.stub(.get, "u", StubResponse())
        let injector = Probe(name: "inject", recorder: Recorder()) { chain in
            var request = chain.request
            request.setValue("1\r\nX-Injected: yes", forHTTPHeaderField: "X-Trace")
            chain.proceed(with: request)
        }
        let client = Client(manager: try makeManager(stub, interceptors: [injector]))
        _ = try await client.data(TestEndpoint("u"))
        #expect(stub.requests.count == 1)
        let sent = stub.requests.first?.allHTTPHeaderFields ?? [:]
        #expect(sent.allSatisfy { !($0.key + $0.value).contains("\r") && !($0.key + $0.value).contains("\n") })
    }

    @Test func anAuthenticatorValueWithALineBreakIsRefusedNotSent() async throws {
        let stub = StubTransport()
        let client = Client(
            manager: try makeManager(stub) { $0.authenticator(InjectingAuthenticator()) })
        let error = await #expect(throws: LeashError.self) { try await client.data(TestEndpoint("u")) }
        #expect(error?.caseName == "encoding")
        #expect(error.map { "\($0)" }?.contains("Bearer x") == false)
        #expect(stub.requests.isEmpty)
    }

    @Test(arguments: ["users/../admin", "users/./7", "a b/c", "users?id=1&x=%20"])
    func oddPathsAreSentAsWritten(path: String) async throws {
        let client = Client(manager: try makeManager(StubTransport()))
        let url = try await client.urlRequest(for: TestEndpoint(path)).url!
        #expect(url.absoluteString.hasPrefix("https://api.test/v1/"))
        #expect(url.absoluteString.removingPercentEncoding?.hasSuffix(path.removingPercentEncoding!) == true)
    }

    @Test func a50MiBJSONResponseDecodes() async throws {
        let item = String(repeating: "x", count: 1022)
        let count = 50 * 1024
        var body = Data("[".utf8)
        body.reserveCapacity(count * 1025 + 2)
        for index in 0..<count {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: Array("\"\(item)\"".utf8))
        }
        body.append(UInt8(ascii: "]"))
        let stub = StubTransport()
        stub.stub(.get, "big", StubResponse(body: body))
        let decoded = try await Client(manager: try makeManager(stub)).execute(TestEndpoint("big"), as: [String].self)
        #expect(body.count > 50 << 20)
        #expect(decoded.count == count)
    }

    @Test(arguments: [1_000, 100_000])
    func deeplyNestedJSONIsADecodingErrorNotACrash(depth: Int) async throws {
        let body = Data((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8)
        let stub = StubTransport()
        stub.stub(.get, "deep", StubResponse(body: body))
        let response = await Client(manager: try makeManager(stub)).response(TestEndpoint("deep"), as: [[Int]].self)
        guard case .failure(LeashError.decoding(_, let data)) = response else {
            Issue.record("expected a decoding error, got \(response)")
            return
        }
        #expect(data.count == depth * 2)
    }

    @Test(arguments: [Data("<html>oops</html>".utf8), Data([0xFF, 0xFE, 0x00]), Data()])
    func aBodyThatIsNotJSONIsADecodingError(body: Data) async throws {
        let stub = StubTransport()
        stub.stub(.get, "html", StubResponse(body: body))
        let response = await Client(manager: try makeManager(stub)).response(TestEndpoint("html"), as: User.self)
        guard case .failure(LeashError.decoding) = response else {
            Issue.record("expected a decoding error, got \(response)")
            return
        }
    }
}
