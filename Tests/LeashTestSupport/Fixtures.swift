import Foundation
import Leash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An endpoint whose every part is given, for tests.
public struct TestEndpoint: Endpoint {
    public var path: String
    public var method: HTTPMethod = .get
    public var parameters: Any? { storedParameters }
    public var headers: [String: String] = [:]
    // `Any` is not Sendable; tests only store Sendable values here.
    nonisolated(unsafe) var storedParameters: Any?

    public init(_ path: String, _ method: HTTPMethod = .get, parameters: Any? = nil, headers: [String: String] = [:]) {
        self.path = path
        self.method = method
        self.storedParameters = parameters
        self.headers = headers
    }
}

public struct User: Codable, Sendable, Equatable {
    public var id: Int
    public var name: String

    public init(id: Int, name: String) {
        self.id = id
        self.name = name
    }
}

/// Counts reads and returns a new token each time it is read.
public final class CountingAuthenticator: Authenticator {
    public static let header = "Authorization"
    private let reads = Counter()
    public var readCount: Int { reads.value }

    public init() {}

    public var authentication: String? {
        get async { "Bearer t\(reads.increment())" }
    }
}

/// A thread-safe counter.
public final class Counter: Sendable {
    private let storage = Mutex(0)
    public var value: Int { storage.withLock { $0 } }

    public init() {}

    /// Adds one and returns the value before.
    @discardableResult
    public func increment() -> Int {
        storage.withLock { value in
            defer { value += 1 }
            return value
        }
    }
}

/// A thread-safe list of events, in order.
public final class Recorder: Sendable {
    private let storage = Mutex<[String]>([])
    public var events: [String] { storage.withLock { $0 } }

    public init() {}

    public func record(_ event: String) {
        storage.withLock { $0.append(event) }
    }
}

/// The library's own lock, reused for the tests' shared state.
package typealias Mutex = Locked

/// An interceptor in every phase that records what it sees and decides with closures.
public struct Probe: ExecutionInterceptor, SuccessInterceptor, FailureInterceptor, CompletionInterceptor,
    SerializationInterceptor
{
    public let name: String
    public let recorder: Recorder
    public var onExecution: @Sendable (InterceptorChain<Data>) async -> Void
    public var onSuccess: @Sendable (InterceptorChain<Data>, HTTPURLResponse) async -> Void
    public var onFailure: @Sendable (InterceptorChain<Data>, any Error) async -> Void
    public var onCompletion: @Sendable (InterceptorChain<Data>, Response<Data>) async -> Void
    public var onSerialization: @Sendable (any AnyChain) async -> Void

    public init(
        name: String,
        recorder: Recorder,
        onExecution: @escaping @Sendable (InterceptorChain<Data>) async -> Void = { _ in },
        onSuccess: @escaping @Sendable (InterceptorChain<Data>, HTTPURLResponse) async -> Void = { _, _ in },
        onFailure: @escaping @Sendable (InterceptorChain<Data>, any Error) async -> Void = { _, _ in },
        onCompletion: @escaping @Sendable (InterceptorChain<Data>, Response<Data>) async -> Void = { _, _ in },
        onSerialization: @escaping @Sendable (any AnyChain) async -> Void = { _ in }
    ) {
        self.name = name
        self.recorder = recorder
        self.onExecution = onExecution
        self.onSuccess = onSuccess
        self.onFailure = onFailure
        self.onCompletion = onCompletion
        self.onSerialization = onSerialization
    }

    public func intercept(chain: InterceptorChain<Data>) async {
        recorder.record("\(name).execution")
        await onExecution(chain)
    }

    public func intercept(chain: InterceptorChain<Data>, response: HTTPURLResponse, data: Data) async {
        recorder.record("\(name).success")
        await onSuccess(chain, response)
    }

    public func intercept(chain: InterceptorChain<Data>, error: any Error) async {
        recorder.record("\(name).failure")
        await onFailure(chain, error)
    }

    public func intercept(chain: InterceptorChain<Data>, response: Response<Data>) async {
        recorder.record("\(name).completion")
        await onCompletion(chain, response)
    }

    public func intercept<S: Serializer>(
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
public protocol AnyChain: Sendable {
    func proceed()
    func fail(with error: any Error)
    var attempt: Int { get }
}

extension InterceptorChain: AnyChain {
    public func fail(with error: any Error) {
        complete(with: error)
    }
}

public struct TestError: Error, Equatable {
    public var code: Int

    public init(code: Int = 1) {
        self.code = code
    }
}

/// A manager over `transport`, with the given interceptors.
public func makeManager(
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
    public var caseName: String {
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
public func name(of error: (any Error)?) -> String {
    guard let error else { return "nil" }
    if let leash = error as? LeashError { return leash.caseName }
    return "\(type(of: error))"
}
