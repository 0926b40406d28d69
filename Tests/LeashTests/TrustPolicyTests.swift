import Foundation
import Leash
import LeashAsyncHTTPClient
import LeashTestServer
import LeashTestSupport
import Testing

/// Pinning against a TLS server on 127.0.0.1 with a certificate made at test time.
@Suite struct TrustPolicyTests {
    private func withTLSServer<T>(_ body: (TestServer, TestCertificate) async throws -> T) async throws -> T {
        let certificate = try TestCertificate.make()
        let server = try await TestServer.start(tls: certificate) { _ in .json(#"{"id":1,"name":"Ada"}"#) }
        return try await run({ try await body(server, certificate) }, thenAlways: { try await server.shutdown() })
    }

    private func call(_ server: TestServer, _ policy: TrustPolicy) async throws -> Response<User> {
        let transport = try AsyncHTTPClientTransport(configuration: .init(trustPolicy: policy))
        let client = Client(manager: try Manager.Builder().url(server.baseURL).transport(transport).timeout(10).build())
        let response = try await withWatchdog(seconds: 20) {
            await client.response(TestEndpoint("users/1"), as: User.self)
        }
        try await transport.shutdown()
        return response
    }

    @Test func thePinnedCertificateIsTrusted() async throws {
        try await withTLSServer { server, certificate in
            let response = try await call(server, .pinnedCertificates([certificate.der]))
            #expect(response.value?.name == "Ada")
        }
    }

    @Test func anotherPinIsRefusedNamingThePin() async throws {
        try await withTLSServer { server, _ in
            let other = try TestCertificate.make()
            let response = try await call(server, .pinnedCertificates([other.der]))
            guard case LeashError.transport(let underlying)? = response.error else {
                Issue.record("expected a transport error, got \(String(describing: response.error))")
                return
            }
            #expect(underlying is PinningFailure)
            #expect("\(underlying)".contains("pinned certificates"))
        }
    }

    @Test func systemTrustRefusesASelfSignedServer() async throws {
        try await withTLSServer { server, _ in
            let response = try await call(server, .system)
            #expect(name(of: response.error) == "transport")
        }
    }

    @Test func policiesThatCannotBeEnforcedRefuseToStart() {
        #expect(throws: LeashError.self) {
            try AsyncHTTPClientTransport(configuration: .init(trustPolicy: .pinnedPublicKeys(["localhost": ["AAAA"]])))
        }
        #expect(throws: LeashError.self) {
            try AsyncHTTPClientTransport(configuration: .init(trustPolicy: .pinnedCertificates([Data("nope".utf8)])))
        }
        #if !canImport(Darwin)
            #expect(throws: LeashError.self) {
                try URLSessionTransport(trustPolicy: .pinnedCertificates([Data()]))
            }
        #endif
        #expect(throws: Never.self) { try URLSessionTransport(trustPolicy: .system) }
    }
}
