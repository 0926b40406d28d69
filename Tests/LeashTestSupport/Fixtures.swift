import Foundation
import Leash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An endpoint whose every part is given, for tests.
package struct TestEndpoint: Endpoint {
    package var path: String
    package var method: HTTPMethod = .get
    package var parameters: Any? { storedParameters }
    package var headers: [String: String] = [:]
    // `Any` is not Sendable; tests only store Sendable values here.
    nonisolated(unsafe) var storedParameters: Any?

    package init(_ path: String, _ method: HTTPMethod = .get, parameters: Any? = nil, headers: [String: String] = [:]) {
        self.path = path
        self.method = method
        self.storedParameters = parameters
        self.headers = headers
    }
}

package struct User: Codable, Sendable, Equatable {
    package var id: Int
    package var name: String

    package init(id: Int, name: String) {
        self.id = id
        self.name = name
    }
}

/// Counts reads and returns a new token each time it is read.
package final class CountingAuthenticator: Authenticator {
    package static let header = "Authorization"
    private let reads = Counter()
    package var readCount: Int { reads.value }

    package init() {}

    package var authentication: String? {
        get async { "Bearer t\(reads.increment())" }
    }
}

/// A thread-safe counter.
package final class Counter: Sendable {
    private let storage = Mutex(0)
    package var value: Int { storage.withLock { $0 } }

    package init() {}

    /// Adds one and returns the value before.
    @discardableResult
    package func increment() -> Int {
        storage.withLock { value in
            defer { value += 1 }
            return value
        }
    }
}

/// A thread-safe list of events, in order.
package final class Recorder: Sendable {
    private let storage = Mutex<[String]>([])
    package var events: [String] { storage.withLock { $0 } }

    package init() {}

    package func record(_ event: String) {
        storage.withLock { $0.append(event) }
    }
}

/// The library's own lock, reused for the tests' shared state.
package typealias Mutex = Locked

/// An interceptor in every phase that records what it sees and decides with closures.
package struct Probe: ExecutionInterceptor, SuccessInterceptor, FailureInterceptor, CompletionInterceptor,
    SerializationInterceptor
{
    package let name: String
    package let recorder: Recorder
    package var onExecution: @Sendable (InterceptorChain<Data>) async -> Void
    package var onSuccess: @Sendable (InterceptorChain<Data>, HTTPURLResponse) async -> Void
    package var onFailure: @Sendable (InterceptorChain<Data>, any Error) async -> Void
    package var onCompletion: @Sendable (InterceptorChain<Data>, Response<Data>) async -> Void
    package var onSerialization: @Sendable (any AnyChain) async -> Void

    package init(
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

    package func intercept(chain: InterceptorChain<Data>) async {
        recorder.record("\(name).execution")
        await onExecution(chain)
    }

    package func intercept(chain: InterceptorChain<Data>, response: HTTPURLResponse, data: Data) async {
        recorder.record("\(name).success")
        await onSuccess(chain, response)
    }

    package func intercept(chain: InterceptorChain<Data>, error: any Error) async {
        recorder.record("\(name).failure")
        await onFailure(chain, error)
    }

    package func intercept(chain: InterceptorChain<Data>, response: Response<Data>) async {
        recorder.record("\(name).completion")
        await onCompletion(chain, response)
    }

    package func intercept<S: Serializer>(
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
package protocol AnyChain: Sendable {
    func proceed()
    func fail(with error: any Error)
    var attempt: Int { get }
}

extension InterceptorChain: AnyChain {
    package func fail(with error: any Error) {
        complete(with: error)
    }
}

package struct TestError: Error, Equatable {
    package var code: Int

    package init(code: Int = 1) {
        self.code = code
    }
}

/// A manager over `transport`, with the given interceptors.
package func makeManager(
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
    package var caseName: String {
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
package func name(of error: (any Error)?) -> String {
    guard let error else { return "nil" }
    if let leash = error as? LeashError { return leash.caseName }
    return "\(type(of: error))"
}
