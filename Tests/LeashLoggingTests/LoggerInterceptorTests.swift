import Foundation
import Leash
import LeashInterceptors
import LeashLogging
import LeashTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Keeps every line and error description it is given.
final class CapturingLogger: LeashLogging.Logger {
    private let lines = Mutex<[String]>([])
    var output: [String] { lines.withLock { $0 } }
    var all: String { output.joined(separator: "\n") }

    func log(message: String) {
        lines.withLock { $0.append(message) }
    }

    func log(error: any Error) {
        lines.withLock { $0.append("error: \(error)") }
    }
}

@Suite struct LoggerInterceptorTests {
    let stub = StubTransport()

    static let secrets = ["s3cr3t-token", "hunter2-pw", "cookie-val-9", "qtok-777", "key-555", "bodytok-1"]

    struct Login: Encodable {
        var user = "ada"
        var password = "hunter2-pw"
        var access_token = "bodytok-1"
    }

    private func client(level: LoggerInterceptor.Level, logger: CapturingLogger, extra: [any Interceptor] = [])
        throws -> Client
    {
        let interceptor = LoggerInterceptor(logger: logger, level: level)
        return Client(
            manager: try makeManager(stub, interceptors: [interceptor] + extra) {
                $0.authenticator(StaticTokenAuthenticator(token: "s3cr3t-token"))
                    .header("Cookie", "session=cookie-val-9")
            })
    }

    @Test func minimalWritesOneLinePerAttemptRetriesIncluded() async throws {
        stub.stub(.get, "items", .status(503), .json("{}"))
        let logger = CapturingLogger()
        let retry = Probe(name: "r", recorder: Recorder(), onFailure: { chain, _ in chain.retry() })
        _ = try await client(level: .minimal, logger: logger, extra: [retry]).execute(
            TestEndpoint("items", parameters: ["page": 2]), as: Empty.self)
        let lines = logger.output.filter { !$0.hasPrefix("error:") }
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("GET https://api.test/v1/items?page=2 → 503 in "))
        #expect(lines[0].hasSuffix("(attempt 1)"))
        #expect(lines[1].hasPrefix("GET https://api.test/v1/items?page=2 → 200 in "))
        #expect(lines[1].hasSuffix("(attempt 2)"))
        #expect(lines[1].contains(" ms "))
    }

    @Test func attemptsWithoutTheNetworkAreLoggedToo() async throws {
        let logger = CapturingLogger()
        let shortCircuit = Probe(name: "c", recorder: Recorder(), onExecution: { $0.complete(with: Data("{}".utf8)) })
        _ = try await client(level: .minimal, logger: logger, extra: [shortCircuit]).execute(
            TestEndpoint("cached"), as: Empty.self)
        #expect(logger.output.count == 1)
        #expect(logger.output[0].contains("GET https://api.test/v1/cached → done (no network)"))
    }

    @Test func noneLogsNothing() async throws {
        stub.stub(.get, "items", .json("{}"))
        let logger = CapturingLogger()
        _ = try await client(level: .none, logger: logger).execute(TestEndpoint("items"), as: Empty.self)
        #expect(logger.output.isEmpty)
    }

    @Test func verboseShowsHeadersAndBodiesCutAtTheLimit() async throws {
        stub.stub(.post, "echo", .json(String(repeating: "x", count: 5000)))
        let logger = CapturingLogger()
        let client = Client(
            manager: try makeManager(
                stub, interceptors: [LoggerInterceptor(logger: logger, level: .verbose, bodyLimit: 100)]))
        _ = await client.response(TestEndpoint("echo", .post, parameters: ["name": "Ada"]), as: Empty.self)
        let all = logger.all
        #expect(all.contains("→ POST https://api.test/v1/echo (attempt 1)"))
        #expect(all.contains("Content-Type: application/json"))
        #expect(all.contains(#"{"name":"Ada"}"#))
        #expect(all.contains("… (4900 more bytes)"))
        #expect(!all.contains(String(repeating: "x", count: 101)))
    }

    @Test(arguments: [LoggerInterceptor.Level.minimal, .verbose])
    func noSecretReachesTheLogAtAnyLevel(level: LoggerInterceptor.Level) async throws {
        stub.stub(
            .post, "login",
            .json(#"{"error":"bad","token":"s3cr3t-token","echo":"hunter2-pw"}"#, statusCode: 401))
        stub.stub(.get, "search", .failure(URLError(.notConnectedToInternet)))
        let logger = CapturingLogger()
        let client = try client(level: level, logger: logger)
        _ = await client.response(
            TestEndpoint("login?token=qtok-777&api_key=key-555", .post, parameters: Login()), as: Empty.self)
        _ = await client.response(TestEndpoint("search?access_token=qtok-777"), as: Empty.self)
        let all = logger.all
        #expect(!all.isEmpty)
        for secret in Self.secrets {
            #expect(!all.contains(secret), "\(secret) leaked at \(level): \(all)")
        }
        #expect(all.contains("***"))
        #expect(logger.output.contains { $0.hasPrefix("error: ") })
    }

    @Test func cURLDescriptionIsRunnableAndRedacted() async throws {
        let client = try client(level: .none, logger: CapturingLogger())
        let request = try await client.urlRequest(
            for: TestEndpoint("login?api_key=key-555&page=1", .post, parameters: Login(), headers: ["X-Trace": "it's"]))
        let curl = request.cURLDescription
        #expect(curl.hasPrefix("curl -X POST 'https://api.test/v1/login?api_key=***&page=1'"))
        #expect(curl.contains("-H 'Authorization: ***'"))
        #expect(curl.contains("-H 'Cookie: ***'"))
        #expect(curl.contains(#"-H 'X-Trace: it'\''s'"#))
        #expect(curl.contains(#""user":"ada""#))
        for secret in Self.secrets {
            #expect(!curl.contains(secret), "\(secret) leaked: \(curl)")
        }
    }

    @Test func cURLQuotesASingleQuoteFollowedByACombiningMark() async throws {
        // One Character in Swift, but the shell sees the quote: it must be escaped.
        let client = try client(level: .none, logger: CapturingLogger())
        let request = try await client.urlRequest(for: TestEndpoint("x", headers: ["X-Trace": "it'\u{301}; rm -rf ~"]))
        #expect(Array(request.cURLDescription.utf8).contains(Array("-H 'X-Trace: it'\\''\u{301}; rm -rf ~'".utf8)))
    }

    @Test func secretsNextToCombiningMarksAreStillRedacted() {
        let redactor = Redactor.default
        // The secret's bytes are in the text even though no whole Character matches it.
        let text = redactor.redact(text: "token sekret-123\u{301} seen", values: ["sekret-123"])
        #expect(!Array(text.utf8).contains(Array("sekret-123".utf8)), "\(text)")
        // A quote or `=` followed by a combining mark is still one in the bytes.
        let json = redactor.redact(text: #"{"password":"\#u{301}hunter2"}"#)
        #expect(!Array(json.utf8).contains(Array("hunter2".utf8)), "\(json)")
        let form = redactor.redact(text: "user=ada&password=\u{301}hunter2")
        #expect(!Array(form.utf8).contains(Array("hunter2".utf8)), "\(form)")
    }

    @Test func redactorIsConfigurable() {
        var redactor = Redactor.default
        redactor.secretNames.append("pin")
        redactor.secretHeaders.insert("x-device")
        #expect(redactor.redact(url: "https://a.test/x?pin=1234&page=2") == "https://a.test/x?pin=***&page=2")
        #expect(
            redactor.redact(headers: ["X-Device": "abc", "Accept": "json"]) == ["X-Device": "***", "Accept": "json"])
        #expect(redactor.redact(text: "pin=1234&x=1") == "pin=***&x=1")
        #expect(Redactor.default.redact(text: "pin=1234") == "pin=1234")
    }

    @Test func errorDescriptionsNeverShowSecrets() {
        let error = LeashError.transport(TestMessage("GET https://a.test/?token=qtok-777&page=1 failed"))
        #expect(!error.description.contains("qtok-777"))
        let redacted = RedactedError(TestMessage("Authorization: Bearer s3cr3t-token failed"), values: ["s3cr3t-token"])
        #expect(!redacted.description.contains("s3cr3t-token"))
    }

    struct TestMessage: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
