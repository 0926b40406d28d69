import AsyncHTTPClient
import Foundation
import Leash
import LeashAsyncHTTPClient
import LeashLogging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What one call of a scenario does.
enum Scenario: String, CaseIterable, Sendable {
    case small = "GET small JSON"
    case users = "GET 100 users + decode"
    case echo = "POST 1 KB JSON + decode echo"
}

struct BenchUser: Codable, Sendable {
    var id: Int
    var name: String
    var email: String
    var active: Bool
}

struct Small: Codable, Sendable {
    var id: Int
    var name: String
    var email: String
    var active: Bool
    var roles: [String]
}

/// About 1 KB of JSON to post.
struct Payload: Codable, Sendable {
    var users: [BenchUser]

    static let sample = Payload(
        users: (1...12).map { BenchUser(id: $0, name: "User \($0)", email: "user\($0)@example.com", active: true) })
}

enum BenchEndpoint: Endpoint {
    case small, users, echo(Payload), bytes(Int64)

    var path: String {
        switch self {
        case .small: "small"
        case .users: "users"
        case .echo: "echo"
        case .bytes(let count): "bytes/\(count)"
        }
    }

    var method: Leash.HTTPMethod {
        if case .echo = self { return .post }
        return .get
    }

    var parameters: Any? {
        if case .echo(let payload) = self { return payload }
        return nil
    }
}

/// A client under test: makes one call of a scenario, decoding the body.
protocol BenchClient: Sendable {
    var name: String { get }
    func call(_ scenario: Scenario) async throws
}

/// A client that builds each scenario's `URLRequest` by hand and decodes with `JSONDecoder`;
/// `send` is what reaches the network.
struct URLRequestClient: BenchClient {
    let name: String
    let base: String
    let send: @Sendable (URLRequest) async throws -> Data
    let encoder = JSONEncoder()
    let decoder = JSONDecoder()

    /// The baseline: `URLSession.data(for:)`.
    static func rawURLSession(base: String) -> URLRequestClient {
        let session = URLSession(configuration: .default)
        return URLRequestClient(name: "raw URLSession", base: base) { try await session.data(for: $0).0 }
    }

    /// A transport's `send` alone: what a transport costs over its raw client, Foundation's
    /// request and response types included.
    static func alone(_ transport: some Transport, name: String, base: String) -> URLRequestClient {
        URLRequestClient(name: name, base: base) { try await transport.send($0).0 }
    }

    func call(_ scenario: Scenario) async throws {
        switch scenario {
        case .small:
            _ = try decoder.decode(Small.self, from: try await send(URLRequest(url: URL(string: base + "/small")!)))
        case .users:
            _ = try decoder.decode(
                [BenchUser].self, from: try await send(URLRequest(url: URL(string: base + "/users")!)))
        case .echo:
            var request = URLRequest(url: URL(string: base + "/echo")!)
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try encoder.encode(Payload.sample)
            _ = try decoder.decode(Payload.self, from: try await send(request))
        }
    }
}

/// The AsyncHTTPClient baseline: `HTTPClient.execute` with a hand-built request and `JSONDecoder`.
struct RawAsyncHTTPClientClient: BenchClient {
    let name = "raw AsyncHTTPClient"
    let base: String
    let client: HTTPClient
    let encoder = JSONEncoder()
    let decoder = JSONDecoder()

    private func fetch(_ path: String, method: NIOHTTP1.HTTPMethod = .GET, body: Data? = nil) async throws -> Data {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: body))
        }
        let response = try await client.execute(request, timeout: .seconds(60))
        return Data(buffer: try await response.body.collect(upTo: 10_000_000))
    }

    func call(_ scenario: Scenario) async throws {
        switch scenario {
        case .small: _ = try decoder.decode(Small.self, from: try await fetch("/small"))
        case .users: _ = try decoder.decode([BenchUser].self, from: try await fetch("/users"))
        case .echo:
            let data = try await fetch("/echo", method: .POST, body: try encoder.encode(Payload.sample))
            _ = try decoder.decode(Payload.self, from: data)
        }
    }
}

/// Leash: the same calls as endpoints, through a manager.
struct LeashClient: BenchClient {
    let name: String
    let client: Client

    init(name: String, manager: Manager) {
        self.name = name
        self.client = Client(manager: manager)
    }

    func call(_ scenario: Scenario) async throws {
        switch scenario {
        case .small: _ = try await client.execute(BenchEndpoint.small, as: Small.self)
        case .users: _ = try await client.execute(BenchEndpoint.users, as: [BenchUser].self)
        case .echo: _ = try await client.execute(BenchEndpoint.echo(.sample), as: Payload.self)
        }
    }
}

/// An interceptor in every phase that only proceeds: the cost of the chain itself.
struct PassThrough: ExecutionInterceptor, SuccessInterceptor, FailureInterceptor, CompletionInterceptor,
    SerializationInterceptor
{
    func intercept(chain: InterceptorChain<Data>) async {}
    func intercept(chain: InterceptorChain<Data>, response: HTTPURLResponse, data: Data) async {}
    func intercept(chain: InterceptorChain<Data>, error: any Error) async {}
    func intercept(chain: InterceptorChain<Data>, response: Response<Data>) async {}
    func intercept<S: Serializer>(
        chain: InterceptorChain<S.Value>,
        response: Response<Data>,
        result: Result<S.Value, any Error>,
        serializer: S
    ) async {}
}

/// An Execution interceptor that only proceeds: the cost of one more interceptor in one phase.
struct ExecutionPassThrough: ExecutionInterceptor {
    func intercept(chain: InterceptorChain<Data>) async {}
}

struct FixedToken: Authenticator {
    static let header = "Authorization"
    var authentication: String? { "Bearer benchmark-token" }
}

enum Clients {
    /// Raw AsyncHTTPClient, the transport alone and Leash over it, sharing one transport's client.
    static func asyncHTTPClient(base: String, transport: AsyncHTTPClientTransport) throws -> [any BenchClient] {
        [
            RawAsyncHTTPClientClient(base: base, client: transport.client),
            URLRequestClient.alone(transport, name: "AsyncHTTPClientTransport alone", base: base),
            LeashClient(
                name: "Leash (AsyncHTTPClient, no interceptors)",
                manager: try Manager.Builder().url(base).transport(transport).build()),
        ]
    }

    static func all(base: String) throws -> [any BenchClient] {
        let plain = try Manager.Builder().url(base).build()
        let full = try Manager.Builder().url(base)
            .authenticator(FixedToken())
            .add(interceptor: PassThrough())
            .add(interceptor: LoggerInterceptor(level: .none))
            .build()
        return [
            URLRequestClient.rawURLSession(base: base),
            LeashClient(name: "Leash (URLSession, no interceptors)", manager: plain),
            LeashClient(name: "Leash (URLSession, 5 phases + auth + logger)", manager: full),
        ]
    }
}
