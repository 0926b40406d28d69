import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One call through the interceptor pipeline, read top to bottom:
///
/// 1. build the request, 2. Execution, 3. transport, then Success or Failure,
/// 4. Completion, 5. serialization and Serialization interceptors, 6. delivery.
///
/// `retry()` loops back to 1; `complete(…, finish: false)` delivers a result through the
/// remaining phases and carries on; cancellation ends the call with `CancellationError` and
/// runs no further interceptor. `run()` returns the final result; `deliverInterim` receives
/// each earlier one.
///
/// Steps 1–4 live in ``DataPipeline``, which is not generic, so the hot path is compiled for
/// `Data` once; only steps 5–6 depend on the serializer.
struct Call<S: Serializer>: Sendable {
    let client: Client
    let endpoint: any Endpoint
    /// Step 5: turns bytes into the call's value.
    let serializer: S
    /// `false` for `data(_:)` calls, which have no Serialization phase.
    let runsSerializationInterceptors: Bool
    /// Step 6 for results delivered with `finish: false`; `nil` when the caller only wants the
    /// final result.
    let deliverInterim: (@Sendable (Response<S.Value>) async -> Void)?
    /// How a download, upload or stream moves its bodies; `nil` for ordinary calls.
    var transfer: TransferPlan? = nil

    /// Runs the call and returns its final result.
    func run() async -> Response<S.Value> {
        let context = CallContext()
        do {
            let pipeline = DataPipeline(client: client, endpoint: endpoint, context: context, transfer: transfer) {
                response, attempt in
                let output = try await finish(response, attempt, interim: true)
                try Task.checkCancellation()
                await deliverInterim?(output)
            }
            let (response, attempt) = try await pipeline.run()
            try Task.checkCancellation()
            return try await finish(response, attempt, interim: false)
        } catch {
            // Only cancellation is thrown inside the pipeline; every other error is a result.
            return .failure(CancellationError())
        }
    }

    /// Step 5: serializes the result and runs Serialization interceptors on it.
    private func finish(_ response: Response<Data>, _ attempt: Attempt, interim: Bool) async throws
        -> Response<S.Value>
    {
        var current: Response<S.Value>
        switch response {
        case .success(let data, let extra):
            do {
                current = .success(
                    value: try serializer.serialize(data: data, response: extra as? HTTPURLResponse), extra: extra)
            } catch let error as LeashError {
                current = .failure(error)
            } catch {
                current = .failure(LeashError.decoding(error, data: data))
            }
        case .failure(let error):
            current = .failure(error)
        }
        guard runsSerializationInterceptors else { return current }
        for interceptor in client.manager.pipeline.serialization {
            try Task.checkCancellation()
            let chain = InterceptorChain<S.Value>(attempt: attempt, allowsRetry: false)
            await interceptor.intercept(
                chain: chain, response: response, result: current.result, serializer: serializer)
            switch chain.seal() {
            case .proceed, .proceedWith, .retry:
                continue
            case .complete(let replacement, let finish):
                if finish || interim { return replacement }
                try Task.checkCancellation()
                await deliverInterim?(replacement)
            }
        }
        return current
    }
}

/// Steps 1–4 of a call: build, Execution, transport, Success or Failure, Completion, with
/// retries. Ends with the raw result to serialize and the attempt that produced it.
struct DataPipeline {
    let client: Client
    let endpoint: any Endpoint
    let context: CallContext
    /// How a transfer moves its bodies; `nil` for ordinary calls.
    let transfer: TransferPlan?
    /// Serializes and delivers a `finish: false` result without ending the call.
    let deliverInterim: (Response<Data>, Attempt) async throws -> Void

    private var manager: Manager { client.manager }
    private var pipeline: Pipeline { client.manager.pipeline }

    /// How a phase ended.
    private enum PhaseOutcome {
        case proceeded
        case completed(Response<Data>)
        case retried
    }

    func run() async throws -> (Response<Data>, Attempt) {
        var number = 0
        while true {
            try Task.checkCancellation()
            let startedAt = ContinuousClock.now

            // 1. Build.
            let request: URLRequest
            var result: Response<Data>?
            do {
                request = try await manager.request(for: endpoint).uploading(transfer?.upload)
            } catch {
                request = manager.partialRequest(for: endpoint)
                result = .failure(error)
            }
            var attempt = Attempt(
                client: client, endpoint: endpoint, context: context, request: request, number: number,
                startedAt: startedAt, transfer: transfer?.kind)
            var retried = false

            // 2. Execution.
            if result == nil {
                let outcome = try await runPhase(pipeline.execution, &attempt, changesRequest: true) {
                    await $0.intercept(chain: $1)
                }
                switch outcome {
                case .proceeded: break
                case .completed(let response): result = response
                case .retried: retried = true
                }
            }

            // 3. Transport, then Success or Failure.
            if result == nil, !retried {
                switch try await send(attempt) {
                case .completed(let response): result = response
                case .retried: retried = true
                case .proceeded: preconditionFailure("send(_:) always ends with a result or a retry")
                }
            }

            if retried {
                if number < manager.maxRetries {
                    number += 1
                    continue
                }
                result = .failure(LeashError.retryLimitExceeded(attempts: number + 1))
            }

            // 4. Completion; the caller does 5–6.
            switch try await runCompletion(result!, attempt, from: 0, interim: false) {
            case .retried:
                number += 1
            case .completed(let response):
                return (response, attempt)
            case .proceeded:
                preconditionFailure("runCompletion(_:_:from:interim:) always ends with a result or a retry")
            }
        }
    }

    /// Step 3: sends the request and runs Success or Failure on what came back.
    private func send(_ attempt: Attempt) async throws -> PhaseOutcome {
        var attempt = attempt
        try Task.checkCancellation()
        let sent: Result<(Data, HTTPURLResponse), any Error>
        // A transfer's body, still to be read once Success has let the call go on.
        var body: ResponseBody?
        let file = transfer?.sink as? FileSink
        if let file {
            // Downloads go to the transport's own file path, which keeps memory flat where the
            // transport cannot be paused (URLSession on Linux).
            do {
                let head = try await file.download(attempt.request, through: manager.transport)
                if let codes = manager.acceptableStatusCodes, !codes.contains(head.statusCode) {
                    sent = .success((file.errorBody(limit: Self.errorBodyLimit), head))
                } else {
                    sent = .success((Data(), head))
                }
            } catch {
                sent = .failure(error)
            }
        } else if let transfer {
            do {
                let (head, opened) = try await manager.transport.open(
                    attempt.request, body: transfer.upload, sent: transfer.sent)
                if let codes = manager.acceptableStatusCodes, !codes.contains(head.statusCode) {
                    // The error carries the start of the body, as it does for ordinary calls.
                    sent = .success((try await opened.collect(upTo: Self.errorBodyLimit, truncating: true), head))
                } else {
                    sent = .success((Data(), head))
                    body = opened
                }
            } catch {
                sent = .failure(error)
            }
        } else {
            do {
                sent = .success(try await manager.transport.send(attempt.request))
            } catch {
                sent = .failure(error)
            }
        }
        // Whatever happens next (Success completing, a retry, cancellation), an unread body
        // ends its transfer; cancelling a body read to its end does nothing.
        defer { body?.cancel() }
        try Task.checkCancellation()
        let outcome: PhaseOutcome
        let natural: Response<Data>
        var accepted: HTTPURLResponse?
        switch sent {
        case .success((let data, let response)):
            if let codes = manager.acceptableStatusCodes, !codes.contains(response.statusCode) {
                let error = LeashError.unacceptableStatusCode(response.statusCode, response: response, data: data)
                natural = .failure(error)
                outcome = try await runPhase(pipeline.failure, &attempt) {
                    await $0.intercept(chain: $1, error: error)
                }
            } else {
                natural = .success(value: data, extra: response)
                accepted = response
                outcome = try await runPhase(pipeline.success, &attempt) {
                    await $0.intercept(chain: $1, response: response, data: data)
                }
            }
        case .failure(let error):
            let error = LeashError(wrapping: error)
            natural = .failure(error)
            outcome = try await runPhase(pipeline.failure, &attempt) { await $0.intercept(chain: $1, error: error) }
        }
        guard case .proceeded = outcome else { return outcome }
        if let file, let head = accepted {
            file.markComplete(head)
        }
        if let body, let transfer, let head = accepted {
            return try await receive(body, head: head, into: transfer.sink, attempt)
        }
        return .completed(natural)
    }

    /// How much of an unacceptable transfer response's body its error carries.
    private static let errorBodyLimit = 1 << 20

    /// Step 3 of a transfer, after Success: moves the body into the sink. A failure part-way
    /// runs Failure, which may retry while the sink can start again.
    private func receive(
        _ body: ResponseBody,
        head: HTTPURLResponse,
        into sink: any TransferSink,
        _ attempt: Attempt
    ) async throws -> PhaseOutcome {
        var attempt = attempt
        do {
            let data = try await sink.receive(body, head: head)
            return .completed(.success(value: data, extra: head))
        } catch {
            // The reader went away or the task was cancelled: the call ends, no Failure runs.
            if error is CancellationError || Task.isCancelled { throw CancellationError() }
            let error = LeashError(wrapping: error)
            let outcome = try await runPhase(pipeline.failure, &attempt, allowsRetry: sink.canRestart) {
                await $0.intercept(chain: $1, error: error)
            }
            if case .proceeded = outcome { return .completed(.failure(error)) }
            return outcome
        }
    }

    /// Steps 2 and 3: runs one data phase until an interceptor completes or retries.
    private func runPhase<Phase>(
        _ interceptors: [Phase],
        _ attempt: inout Attempt,
        changesRequest: Bool = false,
        allowsRetry: Bool = true,
        _ intercept: (Phase, InterceptorChain<Data>) async -> Void
    ) async throws -> PhaseOutcome {
        for interceptor in interceptors {
            try Task.checkCancellation()
            let chain = InterceptorChain<Data>(
                attempt: attempt, allowsRetry: allowsRetry, allowsRequestChange: changesRequest)
            await intercept(interceptor, chain)
            switch chain.seal() {
            case .proceed:
                continue
            case .proceedWith(let request):
                // A header an interceptor set is checked as the endpoint's are: a line break in
                // it would inject headers, so the attempt fails instead of sending it.
                if let bad = request.allHTTPHeaderFields?.first(where: {
                    !HeaderField.isValid(name: $0.key, value: $0.value)
                }) {
                    return .completed(.failure(LeashError.encoding(HeaderError(name: bad.key))))
                }
                attempt = attempt.with(request: request)
            case .complete(let response, finish: true):
                return .completed(response)
            case .complete(let response, finish: false):
                try await deliverInterim(response, attempt, completionFrom: 0)
            case .retry:
                return .retried
            }
        }
        return .proceeded
    }

    /// Step 4: runs Completion from `index`. Ends with the result to serialize, or a retry.
    private func runCompletion(
        _ response: Response<Data>,
        _ attempt: Attempt,
        from index: Int,
        interim: Bool
    ) async throws -> PhaseOutcome {
        var current = response
        let interceptors = pipeline.completion
        var index = index
        while index < interceptors.count {
            try Task.checkCancellation()
            // A stream that has handed chunks to its reader cannot start again.
            let chain = InterceptorChain<Data>(
                attempt: attempt, allowsRetry: !interim && transfer?.sink.canRestart ?? true)
            await interceptors[index].intercept(chain: chain, response: current)
            switch chain.seal() {
            case .proceed, .proceedWith:
                break
            case .complete(let replacement, let finish):
                if finish || interim { return .completed(replacement) }
                try await deliverInterim(replacement, attempt, completionFrom: index + 1)
            case .retry:
                if attempt.number < manager.maxRetries { return .retried }
                current = .failure(LeashError.retryLimitExceeded(attempts: attempt.number + 1))
            }
            index += 1
        }
        return .completed(current)
    }

    /// Delivers a `finish: false` result through the remaining phases without ending the call.
    private func deliverInterim(_ response: Response<Data>, _ attempt: Attempt, completionFrom index: Int) async throws
    {
        guard case .completed(let result) = try await runCompletion(response, attempt, from: index, interim: true)
        else { return }
        try await deliverInterim(result, attempt)
    }
}

/// Passes the body through unchanged.
struct RawDataSerializer: Serializer {
    func serialize(data: Data, response: HTTPURLResponse?) -> Data { data }
}

/// One attempt of a call: what every chain of the attempt shares. A class, so that each chain
/// holds one reference instead of copies of every field.
final class Attempt: Sendable {
    let client: Client
    let endpoint: any Endpoint
    let context: CallContext
    let request: URLRequest
    let number: Int
    let startedAt: ContinuousClock.Instant
    let transfer: TransferKind?

    init(
        client: Client, endpoint: any Endpoint, context: CallContext, request: URLRequest, number: Int,
        startedAt: ContinuousClock.Instant, transfer: TransferKind?
    ) {
        self.client = client
        self.endpoint = endpoint
        self.context = context
        self.request = request
        self.number = number
        self.startedAt = startedAt
        self.transfer = transfer
    }

    /// The same attempt, sending `request` instead.
    func with(request: URLRequest) -> Attempt {
        Attempt(
            client: client, endpoint: endpoint, context: context, request: request, number: number,
            startedAt: startedAt, transfer: transfer)
    }
}

extension LeashError {
    /// Wraps an error thrown by a transport, leaving Leash's own errors untouched.
    init(wrapping error: any Error) {
        if let error = error as? LeashError {
            self = error
        } else if let error = error as? URLError, error.code == .timedOut {
            self = .timedOut
        } else {
            self = .transport(error)
        }
    }
}
