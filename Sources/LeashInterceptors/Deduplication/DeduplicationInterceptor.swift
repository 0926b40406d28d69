import Foundation
import Leash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Makes identical calls that are in flight at the same time share one network call.
///
/// ```swift
/// let manager = try Manager.Builder().url(base)
///     .add(interceptor: DeduplicationInterceptor())
///     .build()
/// ```
///
/// Calls are identical when method, URL and headers are. The first becomes the leader and
/// goes to the network; the others wait in the Execution phase and receive the leader's final
/// result (after its retries and token refreshes) without a network call of their own. Where
/// Nomosi rejected duplicates with an error, Leash coalesces them. If the leader is cancelled
/// or ends without a result, the waiting calls go to the network themselves. Only `GET` and
/// `HEAD` are coalesced unless `methods` says otherwise; downloads, uploads and streams never are.
///
/// Add it after interceptors that change the request in the Execution phase, so that it
/// compares the requests as they will be sent.
public struct DeduplicationInterceptor: ExecutionInterceptor, CompletionInterceptor {
    /// The methods whose calls are coalesced.
    public let methods: Set<HTTPMethod>
    private let flights = Flights()

    /// Creates the interceptor.
    ///
    /// - Parameter methods: The methods whose calls are coalesced; `GET` and `HEAD` by default.
    public init(methods: Set<HTTPMethod> = [.get, .head]) {
        self.methods = methods
    }

    /// Marks a call as the leader of its flight.
    private enum Leadership: CallContextKey {
        typealias Value = LeaderToken
    }

    /// Joins the flight of an identical call, or leads a new one.
    ///
    /// - Parameter chain: The chain of this attempt.
    public func intercept(chain: InterceptorChain<Data>) async {
        // A transfer's body goes to its own file or reader, so it cannot be shared.
        guard chain.transfer == nil, chain.context[Leadership.self] == nil,
            let key = Self.key(for: chain.request, methods: methods)
        else {
            return
        }
        switch await flights.join(key) {
        case .leader(let ticket):
            chain.context[Leadership.self] = LeaderToken(ticket: ticket)
        case .follower(let ticket):
            do {
                chain.complete(with: try await ticket.value())
            } catch {
                // The leader ended without a result: go to the network. Or the call was
                // cancelled while waiting: the pipeline ends it with CancellationError.
            }
        }
    }

    /// Shares the leader's result with the calls that waited for it.
    ///
    /// - Parameters:
    ///   - chain: The chain of this attempt.
    ///   - response: The result.
    public func intercept(chain: InterceptorChain<Data>, response: Response<Data>) async {
        guard let ticket = chain.context[Leadership.self]?.ticket else { return }
        await flights.land(ticket.key, id: ticket.id, with: response)
    }

    /// How many calls are waiting for a leader's result now: for tests that need every call
    /// to have joined before the leader lands.
    package func waitingCount() async -> Int {
        await flights.waitingCount()
    }

    private static func key(for request: URLRequest, methods: Set<HTTPMethod>) -> String? {
        let method = request.httpMethod ?? "GET"
        guard methods.contains(HTTPMethod(method)), let url = request.url else { return nil }
        let headers = (request.allHTTPHeaderFields ?? [:])
            .map { $0.key.lowercased() + ":" + $0.value }
            .sorted()
            .joined(separator: "\n")
        return method + " " + url.absoluteString + "\n" + headers
    }
}

/// Lands the leader's flight when the leader's call ends, result or not.
private final class LeaderToken: Sendable {
    let ticket: Flights.Ticket

    init(ticket: Flights.Ticket) {
        self.ticket = ticket
    }

    deinit {
        // The call is over. If it never reached Completion (cancelled), release the followers.
        Task { [ticket] in await ticket.flights.land(ticket.key, id: ticket.id, with: nil) }
    }
}

/// The calls in flight, by key.
private actor Flights {
    enum Role {
        case leader(Ticket)
        case follower(Ticket)
    }

    /// A call's place in a flight: the leader's flight id, or a follower's waiter id.
    struct Ticket: Sendable {
        let flights: Flights
        let key: String
        let id: Int

        /// The leader's result; throws `CancellationError` when the follower is cancelled, and
        /// `LeaderGone` when the leader ended without a result.
        func value() async throws -> Response<Data> {
            try await withTaskCancellationHandler {
                try await flights.wait(key, waiter: id)
            } onCancel: {
                Task { [flights, key, id] in await flights.cancel(key, waiter: id) }
            }
        }
    }

    struct LeaderGone: Error {}

    private struct Flight {
        var id: Int
        var waiters: [Int: CheckedContinuation<Response<Data>, any Error>] = [:]
        var cancelled: Set<Int> = []
    }

    private var flights: [String: Flight] = [:]
    private var nextID = 0

    func waitingCount() -> Int {
        flights.values.reduce(0) { $0 + $1.waiters.count }
    }

    func join(_ key: String) -> Role {
        nextID += 1
        let ticket = Ticket(flights: self, key: key, id: nextID)
        if flights[key] != nil { return .follower(ticket) }
        flights[key] = Flight(id: nextID)
        return .leader(ticket)
    }

    func wait(_ key: String, waiter: Int) async throws -> Response<Data> {
        try await withCheckedThrowingContinuation { continuation in
            guard flights[key] != nil else {
                continuation.resume(throwing: LeaderGone())
                return
            }
            if flights[key]!.cancelled.remove(waiter) != nil {
                continuation.resume(throwing: CancellationError())
            } else {
                flights[key]!.waiters[waiter] = continuation
            }
        }
    }

    func cancel(_ key: String, waiter: Int) {
        guard flights[key] != nil else { return }
        if let continuation = flights[key]!.waiters.removeValue(forKey: waiter) {
            continuation.resume(throwing: CancellationError())
        } else {
            flights[key]!.cancelled.insert(waiter)
        }
    }

    /// Ends the flight `id` of `key`, handing `result` to its followers (or releasing them).
    func land(_ key: String, id: Int, with result: Response<Data>?) {
        guard let flight = flights[key], flight.id == id else { return }
        flights[key] = nil
        for continuation in flight.waiters.values {
            if let result {
                continuation.resume(returning: result)
            } else {
                continuation.resume(throwing: LeaderGone())
            }
        }
    }
}
