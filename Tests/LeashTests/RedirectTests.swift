import Foundation
import LeashAsyncHTTPClient
import LeashTestServer
import LeashTestSupport
import Testing

@testable import Leash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Credentials stay with their origin across redirects, and HTTPS is never left for HTTP
/// unless allowed: ``RedirectRule`` alone, then on the wire through each transport.
@Suite struct RedirectTests {
    private func request(_ url: String) -> URLRequest {
        var request = URLRequest(url: URL(string: url)!)
        request.setValue("Bearer secret", forHTTPHeaderField: "Authorization")
        request.setValue("session=secret", forHTTPHeaderField: "Cookie")
        request.setValue("kept", forHTTPHeaderField: "X-Trace")
        return request
    }

    @Test func sameOriginKeepsCredentials() throws {
        let source = URL(string: "https://api.example.com/a")!
        let next = try RedirectRule.follow(
            request("https://API.example.com:443/b"), from: source, allowsDowngrade: false)
        #expect(next.value(forHTTPHeaderField: "Authorization") == "Bearer secret")
        #expect(next.value(forHTTPHeaderField: "Cookie") == "session=secret")
    }

    @Test(arguments: ["https://other.example.com/b", "https://api.example.com:8443/b", "http://api.example.com/b"])
    func anotherOriginDropsCredentials(target: String) throws {
        let source = URL(
            string: target.hasPrefix("http:") ? "http://api.example.com:8080/a" : "https://api.example.com/a")!
        let next = try RedirectRule.follow(request(target), from: source, allowsDowngrade: false)
        #expect(next.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(next.value(forHTTPHeaderField: "Cookie") == nil)
        #expect(next.value(forHTTPHeaderField: "X-Trace") == "kept")
    }

    @Test func httpsToHTTPIsRefusedUnlessAllowed() throws {
        let source = URL(string: "https://api.example.com/a?api_key=hunter2")!
        let error = #expect(throws: RedirectRefused.self) {
            try RedirectRule.follow(request("http://api.example.com/b"), from: source, allowsDowngrade: false)
        }
        #expect(error?.description.contains("hunter2") == false)
        let allowed = try RedirectRule.follow(request("http://api.example.com/b"), from: source, allowsDowngrade: true)
        #expect(allowed.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test(arguments: TransportKind.allCases)
    func crossOriginRedirectOnTheWireDropsCredentials(kind: TransportKind) async throws {
        try await withTransport(kind) { transport in
            try await withEchoServer { origin in
                try await withEchoServer { other in
                    let manager = try Manager.Builder().url(origin.baseURL).transport(transport)
                        .header("Authorization", "Bearer secret").header("Cookie", "session=secret")
                        .header("X-Trace", "kept")
                        .build()
                    let client = Client(manager: manager)
                    let target = "\(other.baseURL)/echo"
                    for code in [302, 307] {
                        let away = try await client.execute(
                            TestEndpoint("away/\(code)", parameters: ["to": target]), as: Echo.self)
                        #expect(away.path == "/echo")
                        #expect(away.headers["authorization"] == nil)
                        #expect(away.headers["cookie"] == nil)
                        #expect(away.headers["x-trace"] == "kept")
                    }
                    #expect(other.requestCount == 2)
                    // The same origin keeps them.
                    let home = try await client.execute(TestEndpoint("redirect"), as: Echo.self)
                    #expect(home.headers["authorization"] == "Bearer secret")
                    #expect(home.headers["cookie"] == "session=secret")
                }
            }
        }
    }

    /// URLSession on Linux cannot trust a test certificate, so HTTPS on the wire is tested
    /// through AsyncHTTPClient; the rule URLSessionTransport applies is the one tested above.
    @Test(arguments: [false, true])
    func httpsToHTTPRedirectOnTheWire(allowed: Bool) async throws {
        let certificate = try TestCertificate.make()
        try await withEchoServer { plain in
            let secure = try await TestServer.start(tls: certificate) { _ in
                .status(302, headers: [("Location", "\(plain.baseURL)/echo")])
            }
            try await run(
                {
                    let transport = try AsyncHTTPClientTransport(
                        configuration: .init(
                            trustPolicy: .pinnedCertificates([certificate.der]), allowsInsecureRedirects: allowed))
                    try await run(
                        {
                            let client = Client(
                                manager: try Manager.Builder().url(secure.baseURL).transport(transport).build())
                            let response = await client.response(TestEndpoint("login"), as: Echo.self)
                            if allowed {
                                #expect(try response.result.get().path == "/echo")
                                #expect(plain.requestCount == 1)
                            } else {
                                guard case .failure(LeashError.transport(let refused as RedirectRefused)) = response
                                else {
                                    Issue.record("expected RedirectRefused, got \(response)")
                                    return
                                }
                                #expect(refused.to.absoluteString == "\(plain.baseURL)/echo")
                                #expect(plain.requestCount == 0)
                            }
                        }, thenAlways: { try await transport.shutdown() })
                }, thenAlways: { try await secure.shutdown() })
        }
    }
}
