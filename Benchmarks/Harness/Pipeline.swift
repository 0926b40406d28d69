import Foundation
import Leash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The pipeline's own cost, with no network: Leash over a `StubTransport` against a
/// hand-written baseline that builds the same request and decodes the same bytes.
enum PipelineBenchmark {
    static let body = Data(
        #"{"id":42,"name":"Ada Lovelace","email":"ada@example.com","active":true,"roles":["admin","dev"]}"#.utf8)

    static func transport() -> StubTransport {
        StubTransport(recordsRequests: false) { request in
            (body, HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: nil)!)
        }
    }

    /// Microseconds per call of the hand-written baseline.
    static func baseline(calls: Int) async throws -> Double {
        let stub = transport()
        let decoder = JSONDecoder()
        let base = "https://bench.test/v1"
        let started = ContinuousClock.now
        for _ in 0..<calls {
            var request = URLRequest(url: URL(string: base + "/small")!, timeoutInterval: 60)
            request.httpMethod = "GET"
            let (data, response) = try await stub.send(request)
            guard (200..<300).contains(response.statusCode) else { throw URLError(.badServerResponse) }
            _ = try decoder.decode(Small.self, from: data)
        }
        return (ContinuousClock.now - started).seconds / Double(calls) * 1e6
    }

    /// Microseconds per call through Leash with `interceptors` pass-through interceptors: each
    /// in all five phases, or (`executionOnly`) each in the Execution phase alone.
    static func leash(interceptors: Int, executionOnly: Bool = false, calls: Int) async throws -> Double {
        let list: [any Interceptor] =
            executionOnly
            ? Array(repeating: ExecutionPassThrough(), count: interceptors)
            : Array(repeating: PassThrough(), count: interceptors)
        let manager = try Manager.Builder().url("https://bench.test/v1").transport(transport())
            .interceptors(list)
            .build()
        let client = Client(manager: manager)
        let started = ContinuousClock.now
        for _ in 0..<calls {
            _ = try await client.execute(BenchEndpoint.small, as: Small.self)
        }
        return (ContinuousClock.now - started).seconds / Double(calls) * 1e6
    }
}
