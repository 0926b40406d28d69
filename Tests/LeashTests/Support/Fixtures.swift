import Foundation

@testable import Leash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An endpoint whose every part is given, for tests.
struct TestEndpoint: Endpoint {
    var path: String
    var method: HTTPMethod = .get
    var parameters: Any? { storedParameters }
    var headers: [String: String] = [:]
    // `Any` is not Sendable; tests only store Sendable values here.
    nonisolated(unsafe) var storedParameters: Any?

    init(_ path: String, _ method: HTTPMethod = .get, parameters: Any? = nil, headers: [String: String] = [:]) {
        self.path = path
        self.method = method
        self.storedParameters = parameters
        self.headers = headers
    }
}

struct User: Codable, Sendable, Equatable {
    var id: Int
    var name: String
}

/// Counts calls and returns a new token each time it is read, or a fixed value.
final class CountingAuthenticator: Authenticator {
    static let header = "Authorization"
    private let reads = Counter()
    var readCount: Int { reads.value }

    var authentication: String? {
        get async { "Bearer t\(reads.increment())" }
    }
}

/// A thread-safe counter.
final class Counter: Sendable {
    private let storage = Mutex(0)
    var value: Int { storage.withLock { $0 } }

    /// Adds one and returns the value before.
    @discardableResult
    func increment() -> Int {
        storage.withLock { value in
            defer { value += 1 }
            return value
        }
    }
}

/// A thread-safe list of events, in order.
final class Recorder: Sendable {
    private let storage = Mutex<[String]>([])
    var events: [String] { storage.withLock { $0 } }

    func record(_ event: String) {
        storage.withLock { $0.append(event) }
    }
}

/// The library's own lock, reused for the tests' shared state.
typealias Mutex = Locked

/// An interceptor in every phase that records what it sees and decides with closures.
struct Probe: ExecutionInterceptor, SuccessInterceptor, FailureInterceptor, CompletionInterceptor,
    SerializationInterceptor
{
    let name: String
    let recorder: Recorder
    var onExecution: @Sendable (InterceptorChain<Data>) async -> Void = { _ in }
    var onSuccess: @Sendable (InterceptorChain<Data>, HTTPURLResponse) async -> Void = { _, _ in }
    var onFailure: @Sendable (InterceptorChain<Data>, any Error) async -> Void = { _, _ in }
    var onCompletion: @Sendable (InterceptorChain<Data>, Response<Data>) async -> Void = { _, _ in }
    var onSerialization: @Sendable (any AnyChain) async -> Void = { _ in }

    func intercept(chain: InterceptorChain<Data>) async {
        recorder.record("\(name).execution")
        await onExecution(chain)
    }

    func intercept(chain: InterceptorChain<Data>, response: HTTPURLResponse, data: Data) async {
        recorder.record("\(name).success")
        await onSuccess(chain, response)
    }

    func intercept(chain: InterceptorChain<Data>, error: any Error) async {
        recorder.record("\(name).failure")
        await onFailure(chain, error)
    }

    func intercept(chain: InterceptorChain<Data>, response: Response<Data>) async {
        recorder.record("\(name).completion")
        await onCompletion(chain, response)
    }

    func intercept<S: Serializer>(
        chain: InterceptorChain<S.Value>,
        response: Response<Data>,
        result: Result<S.Value, any Error>,
        serializer: S
    ) async {
        recorder.record("\(name).serialization")
        await onSerialization(chain)
    }
}

/// Lets a test decide on a chain without knowing its value type.
protocol AnyChain: Sendable {
    func proceed()
    func fail(with error: any Error)
    var attempt: Int { get }
}

extension InterceptorChain: AnyChain {
    func fail(with error: any Error) {
        complete(with: error)
    }
}

struct TestError: Error, Equatable {
    var code = 1
}

/// A manager over a stub transport, with the given interceptors.
func makeManager(
    _ transport: any Transport,
    interceptors: [any Interceptor] = [],
    configure: (Manager.Builder) -> Void = { _ in }
) throws -> Manager {
    let builder = Manager.Builder().url("https://api.test/v1").transport(transport).interceptors(interceptors)
    configure(builder)
    return try builder.build()
}

extension LeashError {
    /// The case name, for comparisons in tests.
    var caseName: String {
        switch self {
        case .invalidURL: "invalidURL"
        case .invalidConfiguration: "invalidConfiguration"
        case .encoding: "encoding"
        case .decoding: "decoding"
        case .unacceptableStatusCode(let code, _, _): "unacceptableStatusCode(\(code))"
        case .transport: "transport"
        case .timedOut: "timedOut"
        case .retryLimitExceeded(let attempts): "retryLimitExceeded(\(attempts))"
        case .authenticationFailed: "authenticationFailed"
        }
    }
}

/// The LeashError case name of an error, or its type name.
func name(of error: (any Error)?) -> String {
    guard let error else { return "nil" }
    if let leash = error as? LeashError { return leash.caseName }
    return "\(type(of: error))"
}
