import Dispatch
import Foundation

extension Client {
    /// Calls `endpoint` and hands each delivery to `completion`, in the original Leash style.
    ///
    /// ```swift
    /// client.execute(UsersEndpoint.list(page: 1)) { (response: Response<[User]>) in
    ///     print(response.value ?? [])
    /// }
    /// ```
    ///
    /// `completion` runs exactly once per delivery: once, or more when an interceptor
    /// completes with `finish: false`. Cancelling the handle ends the call with
    /// `CancellationError`, delivered once, unless it had already ended.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint.
    ///   - type: The type to decode; inferred from `completion` when omitted.
    ///   - queue: Where `completion` runs; `nil` runs it on whatever thread the call is on.
    ///   - completion: Receives each delivery.
    /// - Returns: A handle that cancels the call.
    @discardableResult
    public func execute<T: Decodable & Sendable>(
        _ endpoint: any Endpoint,
        as type: T.Type = T.self,
        queue: DispatchQueue? = nil,
        completion: @escaping @Sendable (Response<T>) -> Void
    ) -> CallHandle {
        execute(
            endpoint, serializer: JSONDecodableSerializer<T>(decoder: manager.jsonDecoder), queue: queue,
            completion: completion)
    }

    /// Calls `endpoint`, serializes with `serializer`, and hands each delivery to `completion`.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint.
    ///   - serializer: What turns the body into the value.
    ///   - queue: Where `completion` runs; `nil` runs it on whatever thread the call is on.
    ///   - completion: Receives each delivery.
    /// - Returns: A handle that cancels the call.
    @discardableResult
    public func execute<S: Serializer>(
        _ endpoint: any Endpoint,
        serializer: S,
        queue: DispatchQueue? = nil,
        completion: @escaping @Sendable (Response<S.Value>) -> Void
    ) -> CallHandle {
        let deliver: @Sendable (Response<S.Value>) -> Void = { response in
            if let queue {
                queue.async { completion(response) }
            } else {
                completion(response)
            }
        }
        let call = Call(
            client: self, endpoint: endpoint, serializer: serializer, runsSerializationInterceptors: true,
            deliverInterim: deliver)
        return CallHandle(task: Task { deliver(await call.run()) })
    }
}

/// Cancels a call started with a completion handler.
public final class CallHandle: Sendable {
    private let task: Task<Void, Never>

    init(task: Task<Void, Never>) {
        self.task = task
    }

    /// Cancels the call: the transport call, any backoff and any retry. The completion
    /// handler then receives `CancellationError`, once, unless the call had already ended.
    public func cancel() {
        task.cancel()
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { task.isCancelled }

    /// Waits until the call has delivered its final result.
    public func wait() async {
        await task.value
    }
}
