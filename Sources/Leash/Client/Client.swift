import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Turns endpoints into calls through a ``Manager``'s interceptor pipeline.
///
/// ```swift
/// let client = Client(manager: manager)
/// let users: [User] = try await client.execute(UsersEndpoint.list(page: 1))
/// let user = try await client.execute(UsersEndpoint.read(id: 7), as: User.self)
/// let (data, http) = try await client.data(UsersEndpoint.read(id: 7))
/// ```
///
/// Typed calls decode with the manager's `JSONDecoder` unless given a ``Serializer``.
/// A call whose interceptors deliver more than once (`finish: false`) returns its last
/// delivery from the `async` methods; ``responses(_:as:)`` and the completion-handler
/// ``execute(_:as:queue:completion:)`` receive every delivery.
public final class Client: Sendable {
    /// The manager whose configuration and interceptors every call uses.
    public let manager: Manager

    /// Creates a client for `manager`.
    ///
    /// - Parameter manager: The manager.
    public init(manager: Manager) {
        self.manager = manager
    }

    /// Calls `endpoint` and decodes the body as `T`.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint.
    ///   - type: The type to decode; inferred when omitted. ``Empty`` accepts any body.
    /// - Returns: The decoded value.
    /// - Throws: A ``LeashError``, an error an interceptor completed with, or
    ///   `CancellationError`.
    public func execute<T: Decodable & Sendable>(_ endpoint: any Endpoint, as type: T.Type = T.self) async throws -> T {
        try await response(endpoint, as: type).result.get()
    }

    /// Calls `endpoint` and turns the body into a value with `serializer`.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint.
    ///   - serializer: What turns the body into the value.
    /// - Returns: The value.
    /// - Throws: A ``LeashError``, an error an interceptor completed with, or
    ///   `CancellationError`.
    public func execute<S: Serializer>(_ endpoint: any Endpoint, serializer: S) async throws -> S.Value {
        try await response(endpoint, serializer: serializer).result.get()
    }

    /// Calls `endpoint` and returns the decoded result, success or failure; never throws.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint.
    ///   - type: The type to decode; inferred when omitted.
    /// - Returns: The last delivery of the call.
    public func response<T: Decodable & Sendable>(_ endpoint: any Endpoint, as type: T.Type = T.self) async -> Response<
        T
    > {
        await response(endpoint, serializer: JSONDecodableSerializer<T>(decoder: manager.jsonDecoder))
    }

    /// Calls `endpoint` and returns the serialized result, success or failure; never throws.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint.
    ///   - serializer: What turns the body into the value.
    /// - Returns: The last delivery of the call.
    public func response<S: Serializer>(_ endpoint: any Endpoint, serializer: S) async -> Response<S.Value> {
        await lastDelivery(endpoint, serializer)
    }

    /// Calls `endpoint` and streams every delivery: several when an interceptor completes with
    /// `finish: false` (cache, then network), otherwise one.
    ///
    /// Ending the iteration early cancels the call.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint.
    ///   - type: The type to decode; inferred when omitted.
    /// - Returns: A stream that finishes after the final delivery.
    public func responses<T: Decodable & Sendable>(
        _ endpoint: any Endpoint,
        as type: T.Type = T.self
    ) -> AsyncStream<Response<T>> {
        responses(endpoint, serializer: JSONDecodableSerializer<T>(decoder: manager.jsonDecoder))
    }

    /// Calls `endpoint` and streams every serialized delivery.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint.
    ///   - serializer: What turns the body into the value.
    /// - Returns: A stream that finishes after the final delivery.
    public func responses<S: Serializer>(_ endpoint: any Endpoint, serializer: S) -> AsyncStream<Response<S.Value>> {
        let (stream, continuation) = AsyncStream.makeStream(of: Response<S.Value>.self)
        let call = Call(client: self, endpoint: endpoint, serializer: serializer, runsSerializationInterceptors: true) {
            continuation.yield($0)
        }
        let task = Task {
            continuation.yield(await call.run())
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Calls `endpoint` and returns the raw body and response head, with no serialization.
    ///
    /// - Parameter endpoint: The endpoint.
    /// - Returns: The body and the response head. When an interceptor completed the call with
    ///   data but no `HTTPURLResponse` as its `extra`, the head is a synthesized `200` for the
    ///   base URL.
    /// - Throws: A ``LeashError``, an error an interceptor completed with, or
    ///   `CancellationError`.
    public func data(_ endpoint: any Endpoint) async throws -> (Data, HTTPURLResponse) {
        let response = await lastDelivery(endpoint, RawDataSerializer(), runsSerializationInterceptors: false)
        let data = try response.result.get()
        if let http = response.extra as? HTTPURLResponse { return (data, http) }
        let head = HTTPURLResponse(url: manager.baseURL, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])
        return (data, head!)
    }

    /// The request that a call of `endpoint` would send now, authenticator header included;
    /// interceptors do not run.
    ///
    /// - Parameter endpoint: The endpoint.
    /// - Returns: The request.
    /// - Throws: ``LeashError/invalidURL(_:)`` or ``LeashError/encoding(_:)``.
    public func urlRequest(for endpoint: any Endpoint) async throws -> URLRequest {
        try await manager.request(for: endpoint)
    }

    private func lastDelivery<S: Serializer>(
        _ endpoint: any Endpoint,
        _ serializer: S,
        runsSerializationInterceptors: Bool = true
    ) async -> Response<S.Value> {
        await Call(
            client: self, endpoint: endpoint, serializer: serializer,
            runsSerializationInterceptors: runsSerializationInterceptors, deliverInterim: nil
        ).run()
    }
}
