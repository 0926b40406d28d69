import Foundation
import Leash
import LeashAsyncHTTPClient

/// The transports the integration tests run against, so both see the same suite.
package enum TransportKind: String, CaseIterable, Sendable {
    case urlSession
    case asyncHTTPClient
}

/// Makes a transport of `kind`, runs `body` with it, and shuts it down.
package func withTransport<T>(
    _ kind: TransportKind,
    configuration: AsyncHTTPClientTransport.Configuration = .init(),
    _ body: (any Transport) async throws -> T
) async throws -> T {
    switch kind {
    case .urlSession:
        return try await body(URLSessionTransport())
    case .asyncHTTPClient:
        let transport = try AsyncHTTPClientTransport(configuration: configuration)
        return try await run({ try await body(transport) }, thenAlways: { try await transport.shutdown() })
    }
}
