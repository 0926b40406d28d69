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

/// Real failures over the wire, through each transport, with secrets in every place a request
/// carries them (the authorization header, a cookie, a JSON password, query api keys) and a
/// server that echoes them back: no secret appears in any log level, cURL output or error
/// description, however the error is printed.
@Suite struct RedactionTests {
    static let secrets = ["tok-SECRET-1", "sid-SECRET-2", "pw-SECRET-3", "key-SECRET-4", "qt-SECRET-5"]

    struct Login: Encodable {
        var user = "ada"
        var password = "pw-SECRET-3"
    }

    @Test(arguments: TransportKind.allCases, [LoggerInterceptor.Level.minimal, .verbose])
    func noSecretInLogsCURLOrErrors(kind: TransportKind, level: LoggerInterceptor.Level) async throws {
        let server = try await TestServer.start { request in
            // Echo everything the request carried: headers, body, query.
            let echo = "\(request.headers) \(String(decoding: request.body, as: UTF8.self)) \(request.query ?? "")"
            switch request.path {
            case "/denied": return .text(echo, status: 401)
            case "/garbled": return .json(#"{"token":"tok-SECRET-1","oops"#)
            case "/slow":
                try? await Task.sleep(for: .seconds(2))
                return .json("{}")
            default: return .text(echo, status: 500)
            }
        }
        let closed = try await TestServer.start { _ in .json("{}") }
        let closedURL = closed.baseURL
        try await closed.shutdown()
        try await run(
            {
                try await withTransport(kind) { transport in
                    let logger = CapturingLogger()
                    var outputs: [String] = []
                    for base in [server.baseURL, closedURL] {
                        let manager = try Manager.Builder().url(base).transport(transport).timeout(0.5)
                            .authenticator(StaticTokenAuthenticator(token: "tok-SECRET-1"))
                            .header("Cookie", "sid=sid-SECRET-2")
                            .add(interceptor: LoggerInterceptor(logger: logger, level: level))
                            .build()
                        let client = Client(manager: manager)
                        for path in ["denied", "garbled", "slow", "broken"] {
                            let endpoint = TestEndpoint(
                                "\(path)?api_key=key-SECRET-4&access_token=qt-SECRET-5", .post, parameters: Login())
                            let response = await client.response(endpoint, as: [String: String].self)
                            guard case .failure(let error) = response else {
                                Issue.record("\(path) succeeded")
                                continue
                            }
                            // The echoed secrets are really in the error, to be hidden from its text.
                            if case LeashError.unacceptableStatusCode(401, _, let data) = error {
                                #expect(String(decoding: data, as: UTF8.self).contains("pw-SECRET-3"))
                                #expect(String(decoding: data, as: UTF8.self).contains("tok-SECRET-1"))
                            }
                            outputs += [
                                "\(error)", String(describing: error), String(reflecting: error),
                                error.localizedDescription,
                            ]
                            outputs.append(try await client.urlRequest(for: endpoint).cURLDescription)
                        }
                    }
                    let all = (logger.output + outputs).joined(separator: "\n")
                    #expect(all.contains("***"))
                    for secret in Self.secrets {
                        #expect(!all.contains(secret), "\(secret) leaked through \(kind) at \(level)")
                    }
                    if Self.secrets.contains(where: all.contains) {
                        print(
                            all.split(separator: "\n").filter { line in Self.secrets.contains { line.contains($0) } }
                                .prefix(5).joined(separator: "\n"))
                    }
                }
            }, thenAlways: { try await server.shutdown() })
    }
}
