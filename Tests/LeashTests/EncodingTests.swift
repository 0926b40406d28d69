import Foundation
import Leash
import LeashTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct EncodingTests {
    let client: Client

    init() throws {
        client = Client(manager: try makeManager(StubTransport()))
    }

    private func request(_ endpoint: TestEndpoint) async throws -> URLRequest {
        try await client.urlRequest(for: endpoint)
    }

    private func encodingError(_ endpoint: TestEndpoint) async -> String {
        do {
            _ = try await client.urlRequest(for: endpoint)
            return "no error"
        } catch {
            return name(of: error)
        }
    }

    struct Search: QueryEncodable, Encodable {
        struct Range: Encodable {
            var from: Int
            var to: Int
        }
        var term: String
        var tags: [String]
        var range: Range
        var exact: Bool
        var note: String?
    }

    struct HandWritten: QueryEncodable {
        func toQuery() -> [String: any CustomStringConvertible] { ["b": 2, "a": "x y"] }
    }

    @Test func dictionaryGoesToTheQueryOfAGetSortedAndEscaped() async throws {
        let parameters: [String: Any] = ["q": "a b+c", "page": 2, "flag": true, "amp": "x&y=z/é"]
        let url = try await request(TestEndpoint("users", parameters: parameters)).url!
        #expect(url.absoluteString == "https://api.test/v1/users?amp=x%26y%3Dz%2F%C3%A9&flag=true&page=2&q=a%20b%2Bc")
    }

    @Test func arraysNestedDictionariesAndDatesInTheQuery() async throws {
        let date = Date(timeIntervalSince1970: 0)
        let parameters: [String: Any] = ["ids": [1, 2], "filter": ["name": "ada", "age": 3], "at": date]
        let url = try await request(TestEndpoint("search", parameters: parameters)).url!
        #expect(
            url.query
                == "at=1970-01-01T00%3A00%3A00Z&filter%5Bage%5D=3&filter%5Bname%5D=ada&ids%5B%5D=1&ids%5B%5D=2"
        )
    }

    @Test func queryIsAppendedAfterTheQueryInThePath() async throws {
        let url = try await request(TestEndpoint("/search?sort=asc", parameters: ["q": "x"])).url!
        #expect(url.absoluteString == "https://api.test/v1/search?sort=asc&q=x")
    }

    @Test func encodableQueryEncodableNeedsNoCode() async throws {
        let search = Search(term: "swift nio", tags: ["a", "b"], range: .init(from: 1, to: 9), exact: false)
        let url = try await request(TestEndpoint("search", .post, parameters: search)).url!
        #expect(
            url.query
                == "exact=false&range%5Bfrom%5D=1&range%5Bto%5D=9&tags%5B%5D=a&tags%5B%5D=b&term=swift%20nio"
        )
    }

    @Test func handWrittenToQueryIsUsed() async throws {
        let url = try await request(TestEndpoint("x", .delete, parameters: HandWritten())).url!
        #expect(url.query == "a=x%20y&b=2")
    }

    @Test func dictionaryIsAJSONBodyForPost() async throws {
        let request = try await request(TestEndpoint("users", .post, parameters: ["name": "Ada", "age": 36]))
        #expect(request.url?.query == nil)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
        let body = try JSONSerialization.jsonObject(with: request.httpBody ?? Data()) as? [String: Any]
        #expect(body?["name"] as? String == "Ada")
        #expect(body?["age"] as? Int == 36)
    }

    @Test func sendableDictionaryEncodesLikeAnyDictionary() async throws {
        let sendable: [String: any Sendable] = ["name": "Ada", "tags": ["a"]]
        let request = try await request(TestEndpoint("users", .patch, parameters: sendable))
        #expect(String(decoding: request.httpBody ?? Data(), as: UTF8.self) == #"{"name":"Ada","tags":["a"]}"#)
        let get = try await self.request(TestEndpoint("users", parameters: sendable))
        #expect(get.url?.query == "name=Ada&tags%5B%5D=a")
    }

    @Test func encodableIsAJSONBodyWithTheManagersEncoder() async throws {
        struct Event: Encodable { var at: Date }
        let manager = try makeManager(StubTransport()) { $0.jsonEncoder { $0.dateEncodingStrategy = .iso8601 } }
        let request = try await Client(manager: manager).urlRequest(
            for: TestEndpoint("events", .put, parameters: Event(at: Date(timeIntervalSince1970: 0)))
        )
        #expect(String(decoding: request.httpBody ?? Data(), as: UTF8.self) == #"{"at":"1970-01-01T00:00:00Z"}"#)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
    }

    @Test func endpointContentTypeIsKept() async throws {
        let endpoint = TestEndpoint(
            "users", .post, parameters: User(id: 1, name: "A"),
            headers: ["content-type": "application/vnd.api+json"])
        let request = try await request(endpoint)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/vnd.api+json")
    }

    @Test func rawDataIsTheBody() async throws {
        let request = try await request(TestEndpoint("blob", .post, parameters: Data([0, 1, 2])))
        #expect(request.httpBody == Data([0, 1, 2]))
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/octet-stream")
    }

    @Test func multipartBodyHasBoundaryAndCRLFs() async throws {
        var form = MultipartFormData(boundary: "XyZ")
        form.append("Ada", name: "name")
        form.append(Data("hi".utf8), name: "file", fileName: "a \"b\".txt", mimeType: "text/plain")
        let request = try await request(TestEndpoint("upload", .post, parameters: form))
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "multipart/form-data; boundary=XyZ")
        let expected =
            "--XyZ\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nAda\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a %22b%22.txt\"\r\n"
            + "Content-Type: text/plain\r\n\r\nhi\r\n--XyZ--\r\n"
        #expect(String(decoding: request.httpBody ?? Data(), as: UTF8.self) == expected)
    }

    @Test func multipartRefusesLineBreaksAndBoundaryInContent() async {
        var form = MultipartFormData(boundary: "XyZ")
        form.append("x", name: "a\r\nEvil: 1")
        #expect(await encodingError(TestEndpoint("u", .post, parameters: form)) == "encoding")
        var clash = MultipartFormData(boundary: "XyZ")
        clash.append("--XyZ inside", name: "a")
        #expect(await encodingError(TestEndpoint("u", .post, parameters: clash)) == "encoding")
    }

    /// Found by the multipart fuzzer: a quote followed by a combining mark is one `Character`
    /// in Swift, so `Character`-wise escaping left it raw, ending the quoted name on the wire.
    @Test func aQuoteFollowedByACombiningMarkIsStillEscaped() async throws {
        var form = MultipartFormData(boundary: "XyZ")
        form.append(
            Data("x".utf8), name: "a\"\u{301}; filename=\"evil", fileName: "f\"\u{5B4}.txt", mimeType: "text/plain")
        let body = try #require(try await request(TestEndpoint("u", .post, parameters: form)).httpBody)
        let head = String(decoding: body, as: UTF8.self).components(separatedBy: "\r\n")[1]
        #expect(
            Array(head.utf8)
                == Array(
                    #"Content-Disposition: form-data; name="a%22\#u{301}; filename=%22evil"; filename="f%22\#u{5B4}.txt""#
                        .utf8))
    }

    @Test func multipartBoundariesAreCheckedAndQuotedWhenNeeded() async throws {
        for bad in ["", String(repeating: "a", count: 71), "ends in space ", "line\r\nbreak", "semi;colon", "é"] {
            var form = MultipartFormData(boundary: bad)
            form.append("x", name: "a")
            #expect(await encodingError(TestEndpoint("u", .post, parameters: form)) == "encoding", "\(bad)")
        }
        var spaced = MultipartFormData(boundary: "a b:c")
        spaced.append("x", name: "a")
        let request = try await request(TestEndpoint("u", .post, parameters: spaced))
        #expect(request.value(forHTTPHeaderField: "Content-Type") == #"multipart/form-data; boundary="a b:c""#)
        #expect(MultipartFormData(boundary: "plain-1").contentType == "multipart/form-data; boundary=plain-1")
    }

    struct Opaque: @unchecked Sendable {}
    struct Described: CustomStringConvertible { var description: String { "d" } }

    @Test(arguments: [
        ("GET Encodable", TestEndpoint("u", .get, parameters: User(id: 1, name: "A"))),
        ("DELETE Encodable", TestEndpoint("u", .delete, parameters: User(id: 1, name: "A"))),
        ("GET Data", TestEndpoint("u", .get, parameters: Data([1]))),
        ("HEAD multipart", TestEndpoint("u", .head, parameters: MultipartFormData())),
        ("GET array", TestEndpoint("u", .get, parameters: [1, "a"] as [Any])),
        ("GET non-string dictionary", TestEndpoint("u", .get, parameters: ["a": Opaque()])),
        ("POST non-JSON dictionary", TestEndpoint("u", .post, parameters: ["a": Opaque()])),
        ("POST custom value in dictionary", TestEndpoint("u", .post, parameters: ["a": Described()])),
        ("POST NaN", TestEndpoint("u", .post, parameters: ["a": Double.nan])),
        ("GET NaN", TestEndpoint("u", .get, parameters: ["a": Double.infinity])),
        ("POST Encodable NaN", TestEndpoint("u", .post, parameters: ["a": Double.nan] as [String: Double])),
        ("anything else", TestEndpoint("u", .post, parameters: Opaque())),
        ("header injection", TestEndpoint("u", headers: ["X-A": "1\r\nEvil: yes"])),
    ])
    func whatCannotBeSentIsAnEncodingError(label: String, endpoint: TestEndpoint) async {
        #expect(await encodingError(endpoint) == "encoding", "\(label)")
    }

    @Test func fragmentInPathIsAnInvalidURL() async {
        #expect(await encodingError(TestEndpoint("users#top")) == "invalidURL")
    }

    @Test func spacesInPathAreEscaped() async throws {
        let url = try await request(TestEndpoint("users/Ada Lovelace")).url!
        #expect(url.absoluteString == "https://api.test/v1/users/Ada%20Lovelace")
    }

    @Test func headerPrecedenceBuilderThenEndpointThenAuthenticator() async throws {
        struct Fixed: Authenticator {
            static let header = "X-Key"
            var authentication: String? { "from-auth" }
        }
        let manager = try makeManager(StubTransport()) {
            $0.header("X-Key", "from-builder").header("X-Other", "builder").header("X-Both", "builder")
                .authenticator(Fixed())
        }
        let request = try await Client(manager: manager).urlRequest(
            for: TestEndpoint("u", headers: ["x-key": "from-endpoint", "X-Both": "endpoint"])
        )
        #expect(request.value(forHTTPHeaderField: "X-Key") == "from-auth")
        #expect(request.value(forHTTPHeaderField: "X-Both") == "endpoint")
        #expect(request.value(forHTTPHeaderField: "X-Other") == "builder")
    }

    @Test func nilAuthenticationSendsNoHeader() async throws {
        struct Anonymous: Authenticator {
            static let header = "Authorization"
            var authentication: String? { nil }
        }
        let manager = try makeManager(StubTransport()) { $0.authenticator(Anonymous()) }
        let request = try await Client(manager: manager).urlRequest(for: TestEndpoint("u"))
        #expect(request.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test func timeoutIsSetOnEveryRequest() async throws {
        let manager = try makeManager(StubTransport()) { $0.timeout(7) }
        let request = try await Client(manager: manager).urlRequest(for: TestEndpoint("u"))
        #expect(request.timeoutInterval == 7)
    }
}
