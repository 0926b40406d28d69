import Foundation
import Leash
import LeashInterceptors
import LeashTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Validators, headers, authenticators and events, over a stub transport.
@Suite struct SmallInterceptorTests {
    let stub = StubTransport()

    enum APIError: Error, Equatable {
        case unauthorized, server(Int), coded(String)
    }

    struct ErrorBody: Decodable {
        var code: String
    }

    @Test func statusCodeValidatorMapsRangesToErrors() async throws {
        stub.stub(.get, "401", .status(401))
        stub.stub(.get, "502", .status(502))
        stub.stub(.get, "404", .status(404))
        stub.stub(.get, "200", .json("{}"))
        let validator = StatusCodeValidator(rules: [
            .init(401...403) { _, _ in APIError.unauthorized },
            .init(500...599) { response, _ in APIError.server(response.statusCode) },
        ])
        let client = Client(manager: try makeManager(stub, interceptors: [validator]) { $0.acceptableStatusCodes(nil) })
        #expect(await client.response(TestEndpoint("401"), as: Empty.self).error as? APIError == .unauthorized)
        #expect(await client.response(TestEndpoint("502"), as: Empty.self).error as? APIError == .server(502))
        #expect(
            name(of: await client.response(TestEndpoint("404"), as: Empty.self).error) == "unacceptableStatusCode(404)")
        #expect(await client.response(TestEndpoint("200"), as: Empty.self).isSuccess)
    }

    @Test func bodyValidatorTurnsErrorBodiesIntoErrors() async throws {
        stub.stub(.get, "ok-but-error", .json(#"{"code":"quota"}"#))
        stub.stub(.get, "unprocessable", .json(#"{"code":"invalid"}"#, statusCode: 422))
        stub.stub(.get, "fine", .json(#"{"id":1,"name":"Ada"}"#))
        let validator = BodyValidator<ErrorBody> { APIError.coded($0.code) }
        let client = Client(manager: try makeManager(stub, interceptors: [validator]))
        #expect(
            await client.response(TestEndpoint("ok-but-error"), as: Empty.self).error as? APIError == .coded("quota"))
        #expect(
            await client.response(TestEndpoint("unprocessable"), as: Empty.self).error as? APIError == .coded("invalid")
        )
        #expect(try await client.execute(TestEndpoint("fine"), as: User.self).name == "Ada")
    }

    @Test func headersInterceptorAddsWhatIsMissingAndKeepsTheRequestIDAcrossRetries() async throws {
        stub.stub(.get, "x", .status(503), .json("{}"))
        let headers = HeadersInterceptor(
            headers: ["Accept-Language": "en", "X-Keep": "interceptor"], userAgent: "Leash/1",
            requestIDHeader: "X-Request-ID")
        let retry = Probe(
            name: "r", recorder: Recorder(),
            onFailure: { chain, _ in chain.retry() })
        let client = Client(
            manager: try makeManager(stub, interceptors: [headers, retry]) { $0.header("X-Keep", "manager") })
        _ = try await client.execute(TestEndpoint("x"), as: Empty.self)
        let sent = stub.requests
        #expect(sent.count == 2)
        #expect(sent.allSatisfy { $0.value(forHTTPHeaderField: "User-Agent") == "Leash/1" })
        #expect(sent.allSatisfy { $0.value(forHTTPHeaderField: "Accept-Language") == "en" })
        #expect(sent.allSatisfy { $0.value(forHTTPHeaderField: "X-Keep") == "manager" })
        let ids = sent.map { $0.value(forHTTPHeaderField: "X-Request-ID") }
        #expect(ids[0] != nil && ids[0] == ids[1])
        _ = try await client.execute(TestEndpoint("x"), as: Empty.self)
        #expect(stub.requests.last?.value(forHTTPHeaderField: "X-Request-ID") != ids[0])
    }

    @Test func basicAndTokenAuthenticators() async throws {
        #expect(BasicAuthenticator(user: "ada", password: "p@ss").authentication == "Basic YWRhOnBAc3M=")
        #expect(StaticTokenAuthenticator(token: "abc").authentication == "Bearer abc")
        #expect(StaticTokenAuthenticator(token: #"a"b"#, style: .tokenAuth).authentication == #"Token token="a\"b""#)
        // A quote followed by a combining mark is one Character, but still a quote on the wire.
        let marked = StaticTokenAuthenticator(token: "a\"\u{301}b\\\u{301}", style: .tokenAuth).authentication
        #expect(Array((marked ?? "").utf8) == Array("Token token=\"a\\\"\u{301}b\\\\\u{301}\"".utf8))
        let manager = try makeManager(stub) { $0.authenticator(BasicAuthenticator(user: "ada", password: "x")) }
        let request = try await Client(manager: manager).urlRequest(for: TestEndpoint("x"))
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Basic YWRhOng=")
    }

    @Test func eventInterceptorReportsStartRetryAndFinish() async throws {
        stub.stub(.get, "x", .status(500), .json("{}"))
        stub.stub(.get, "bad", .status(404))
        let (events, stream) = EventInterceptor.makeStream()
        let retry = Probe(
            name: "r", recorder: Recorder(), onFailure: { chain, _ in if chain.attempt == 0 { chain.retry() } })
        let client = Client(manager: try makeManager(stub, interceptors: [events, retry]))
        _ = try await client.execute(TestEndpoint("x"), as: Empty.self)
        _ = await client.response(TestEndpoint("bad"), as: Empty.self)
        var seen: [String] = []
        var calls: [UUID] = []
        for await event in stream {
            calls.append(event.call)
            switch event {
            case .started(_, _, let attempt): seen.append("started \(attempt)")
            case .retried(_, _, let attempt): seen.append("retried \(attempt)")
            case .finished(_, _, let status, _): seen.append("finished \(status ?? 0)")
            case .failed(_, _, let error, _): seen.append("failed \(name(of: error))")
            }
            if seen.count == 8 { break }
        }
        #expect(
            seen == [
                "started 0", "retried 1", "started 1", "finished 200",
                "started 0", "retried 1", "started 1", "failed unacceptableStatusCode(404)",
            ])
        #expect(Set(calls.prefix(4)).count == 1)
        #expect(Set(calls).count == 2)
    }
}
