import Foundation
import Leash
import LeashTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct InterceptorChainTests {
    let stub = StubTransport()
    let recorder = Recorder()

    init() {
        stub.stub(.get, "users/1", .json(#"{"id":1,"name":"Ada"}"#))
        stub.stub(.get, "missing", .json(#"{"error":"nope"}"#, statusCode: 404))
        stub.stub(.get, "down", .failure(URLError(.cannotConnectToHost)))
        stub.stub(.delete, "users/1", .status(204))
    }

    private func client(_ interceptors: [any Interceptor], configure: (Manager.Builder) -> Void = { _ in }) throws
        -> Client
    {
        Client(manager: try makeManager(stub, interceptors: interceptors, configure: configure))
    }

    // MARK: Order

    @Test func phasesRunInOrderOnSuccess() async throws {
        let client = try client([Probe(name: "a", recorder: recorder), Probe(name: "b", recorder: recorder)])
        let user = try await client.execute(TestEndpoint("users/1"), as: User.self)
        #expect(user == User(id: 1, name: "Ada"))
        #expect(
            recorder.events == [
                "a.execution", "b.execution", "a.success", "b.success", "a.completion", "b.completion",
                "a.serialization", "b.serialization",
            ])
    }

    @Test func unacceptableStatusGoesToFailure() async throws {
        let client = try client([Probe(name: "a", recorder: recorder)])
        let response = await client.response(TestEndpoint("missing"), as: User.self)
        #expect(name(of: response.error) == "unacceptableStatusCode(404)")
        #expect(recorder.events == ["a.execution", "a.failure", "a.completion", "a.serialization"])
    }

    @Test func validationOffSendsEveryStatusToSuccess() async throws {
        let client = try client([Probe(name: "a", recorder: recorder)]) { $0.acceptableStatusCodes(nil) }
        let (data, http) = try await client.data(TestEndpoint("missing"))
        #expect(http.statusCode == 404)
        #expect(String(decoding: data, as: UTF8.self) == #"{"error":"nope"}"#)
        // data(_:) has no Serialization phase.
        #expect(recorder.events == ["a.execution", "a.success", "a.completion"])
    }

    @Test func transportErrorsAreWrappedAndGoToFailure() async throws {
        let seen = Mutex<String>("")
        let probe = Probe(
            name: "a", recorder: recorder, onFailure: { _, error in seen.withLock { $0 = name(of: error) } })
        let response = try await client([probe]).response(TestEndpoint("down"), as: User.self)
        #expect(seen.withLock { $0 } == "transport")
        guard case LeashError.transport(let underlying)? = response.error else {
            Issue.record("expected transport, got \(String(describing: response.error))")
            return
        }
        #expect((underlying as? URLError)?.code == .cannotConnectToHost)
    }

    // MARK: Decisions

    @Test func executionCompleteShortCircuits() async throws {
        let first = Probe(
            name: "a", recorder: recorder,
            onExecution: { $0.complete(with: Data(#"{"id":9,"name":"Cached"}"#.utf8), extra: "cache") })
        let client = try client([first, Probe(name: "b", recorder: recorder)])
        let response = await client.response(TestEndpoint("users/1"), as: User.self)
        #expect(response.value == User(id: 9, name: "Cached"))
        #expect(response.extra as? String == "cache")
        #expect(stub.requests.isEmpty)
        #expect(
            recorder.events == ["a.execution", "a.completion", "b.completion", "a.serialization", "b.serialization"])
    }

    @Test func completeInAPhaseSkipsTheRestOfThatPhase() async throws {
        let first = Probe(name: "a", recorder: recorder, onSuccess: { chain, _ in chain.complete(with: TestError()) })
        let client = try client([first, Probe(name: "b", recorder: recorder)])
        let response = await client.response(TestEndpoint("users/1"), as: User.self)
        #expect(response.error as? TestError == TestError())
        #expect(recorder.events.filter { $0.hasSuffix("success") } == ["a.success"])
        #expect(recorder.events.filter { $0.hasSuffix("completion") } == ["a.completion", "b.completion"])
    }

    @Test func firstDecisionWins() async throws {
        let completeThenProceed = Probe(
            name: "a", recorder: recorder,
            onExecution: { chain in
                chain.complete(with: TestError(code: 1))
                chain.proceed()
                chain.complete(with: TestError(code: 2))
            })
        let response = try await client([completeThenProceed]).response(TestEndpoint("users/1"), as: User.self)
        #expect(response.error as? TestError == TestError(code: 1))

        let proceedThenComplete = Probe(
            name: "b", recorder: recorder,
            onExecution: { chain in
                chain.proceed()
                chain.complete(with: TestError(code: 3))
            })
        let second = try await client([proceedThenComplete]).response(TestEndpoint("users/1"), as: User.self)
        #expect(second.value == User(id: 1, name: "Ada"))
    }

    @Test func aDecisionAfterReturningIsIgnored() async throws {
        let late = Mutex<InterceptorChain<Data>?>(nil)
        let probe = Probe(name: "a", recorder: recorder, onExecution: { chain in late.withLock { $0 = chain } })
        let response = try await client([probe]).response(TestEndpoint("users/1"), as: User.self)
        late.withLock { $0?.complete(with: TestError()) }
        #expect(response.value == User(id: 1, name: "Ada"))
    }

    @Test func silentInterceptorHasProceeded() async throws {
        // Probe's default closures decide nothing.
        let client = try client([Probe(name: "a", recorder: recorder)])
        #expect(try await client.execute(TestEndpoint("users/1"), as: User.self).id == 1)
    }

    @Test func proceedWithChangesTheRequestForTheRestOfTheAttempt() async throws {
        let seen = Mutex<[String]>([])
        let adder = Probe(
            name: "a", recorder: recorder,
            onExecution: { chain in
                var request = chain.request
                request.setValue("r-\(chain.attempt)", forHTTPHeaderField: "X-Request-Id")
                chain.proceed(with: request)
            },
            onSuccess: { chain, _ in
                var request = chain.request
                request.setValue("ignored", forHTTPHeaderField: "X-Request-Id")
                chain.proceed(with: request)
            })
        let reader = Probe(
            name: "b", recorder: recorder,
            onExecution: { chain in
                seen.withLock { $0.append(chain.request.value(forHTTPHeaderField: "X-Request-Id") ?? "-") }
            },
            onCompletion: { chain, _ in
                seen.withLock { $0.append(chain.request.value(forHTTPHeaderField: "X-Request-Id") ?? "-") }
            })
        _ = try await client([adder, reader]).execute(TestEndpoint("users/1"), as: User.self)
        #expect(seen.withLock { $0 } == ["r-0", "r-0"])
        #expect(stub.requests.map { $0.value(forHTTPHeaderField: "X-Request-Id") } == ["r-0"])
    }

    @Test func failureInterceptorCanRecover() async throws {
        let recover = Probe(
            name: "a", recorder: recorder,
            onFailure: { chain, _ in chain.complete(with: Data(#"{"id":0,"name":"Offline"}"#.utf8)) })
        let user = try await client([recover]).execute(TestEndpoint("down"), as: User.self)
        #expect(user.name == "Offline")
    }

    // MARK: Retry

    @Test func retryRebuildsTheRequestAndRereadsTheAuthenticator() async throws {
        let auth = CountingAuthenticator()
        stub.stub(.get, "flaky", .status(401), .json(#"{"id":2,"name":"Bo"}"#))
        let attempts = Mutex<[Int]>([])
        let tokens = Mutex<[String]>([])
        let retrier = Probe(
            name: "r", recorder: recorder,
            onExecution: { chain in
                attempts.withLock { $0.append(chain.attempt) }
                tokens.withLock { $0.append(chain.request.value(forHTTPHeaderField: "Authorization") ?? "") }
            },
            onFailure: { chain, _ in chain.retry() })
        let user = try await client([retrier]) { $0.authenticator(auth) }.execute(TestEndpoint("flaky"), as: User.self)
        #expect(user.name == "Bo")
        #expect(attempts.withLock { $0 } == [0, 1])
        #expect(tokens.withLock { $0 } == ["Bearer t0", "Bearer t1"])
        #expect(stub.requests.map { $0.value(forHTTPHeaderField: "Authorization") } == ["Bearer t0", "Bearer t1"])
        // The retried attempt ends in Failure, without Completion.
        #expect(
            recorder.events == [
                "r.execution", "r.failure", "r.execution", "r.success", "r.completion", "r.serialization",
            ])
    }

    @Test func retryFromCompletionAndContextSurvivesIt() async throws {
        enum Seen: CallContextKey { typealias Value = Int }
        stub.stub(.get, "twice", .status(500), .json(#"{"id":3,"name":"Cy"}"#))
        let probe = Probe(
            name: "c", recorder: recorder,
            onCompletion: { chain, response in
                chain.context[Seen.self] = (chain.context[Seen.self] ?? 0) + 1
                if response.isFailure { chain.retry() }
            })
        let user = try await client([probe]).execute(TestEndpoint("twice"), as: User.self)
        #expect(user.id == 3)
        #expect(stub.requests.count == 2)
        #expect(recorder.events.filter { $0 == "c.completion" }.count == 2)
    }

    @Test func contextIsSharedAcrossPhasesAndAttempts() async throws {
        enum Seen: CallContextKey { typealias Value = [String] }
        stub.stub(.get, "again", .status(500), .json("{}"))
        let final = Mutex<[String]>([])
        let probe = Probe(
            name: "c", recorder: recorder,
            onExecution: { chain in chain.context[Seen.self] = (chain.context[Seen.self] ?? []) + ["e\(chain.attempt)"]
            },
            onFailure: { chain, _ in chain.retry() },
            onCompletion: { chain, _ in final.withLock { $0 = chain.context[Seen.self] ?? [] } })
        _ = try await client([probe]).execute(TestEndpoint("again"), as: Empty.self)
        #expect(final.withLock { $0 } == ["e0", "e1"])
    }

    @Test func retryLimitIsEnforcedAndCompletionSeesIt() async throws {
        let seen = Mutex<[String]>([])
        let probe = Probe(
            name: "a", recorder: recorder,
            onFailure: { chain, _ in chain.retry() },
            onCompletion: { _, response in seen.withLock { $0.append(name(of: response.error)) } })
        let response = try await client([probe]) { $0.maxRetries(3) }.response(TestEndpoint("down"), as: User.self)
        #expect(name(of: response.error) == "retryLimitExceeded(4)")
        #expect(stub.requests.count == 4)
        #expect(seen.withLock { $0 } == ["retryLimitExceeded(4)"])
    }

    @Test func retryFromExecutionCountsTowardTheLimit() async throws {
        let probe = Probe(name: "a", recorder: recorder, onExecution: { $0.retry() })
        let response = try await client([probe]) { $0.maxRetries(0) }.response(TestEndpoint("users/1"), as: User.self)
        #expect(name(of: response.error) == "retryLimitExceeded(1)")
        #expect(stub.requests.isEmpty)
    }

    @Test func retryInSerializationIsIgnored() async throws {
        struct Retrying: SerializationInterceptor {
            func intercept<S: Serializer>(
                chain: InterceptorChain<S.Value>, response: Response<Data>, result: Result<S.Value, any Error>,
                serializer: S
            ) async {
                (chain as? InterceptorChain<Data>)?.retry()
            }
        }
        let client = try client([Retrying()])
        let data = try await client.execute(TestEndpoint("users/1"), serializer: PassThrough())
        #expect(!data.isEmpty)
        #expect(stub.requests.count == 1)
    }

    // MARK: finish: false

    @Test func finishFalseDeliversTwice() async throws {
        let cache = Probe(
            name: "cache", recorder: recorder,
            onExecution: { $0.complete(with: Data(#"{"id":1,"name":"Cached"}"#.utf8), finish: false) })
        let client = try client([cache, Probe(name: "b", recorder: recorder)])
        var names: [String] = []
        for await delivery in client.responses(TestEndpoint("users/1"), as: User.self) {
            names.append(delivery.value?.name ?? "error")
        }
        #expect(names == ["Cached", "Ada"])
        #expect(stub.requests.count == 1)
        // The cached result passed Completion and Serialization before the network result.
        #expect(
            recorder.events == [
                "cache.execution", "cache.completion", "b.completion", "cache.serialization", "b.serialization",
                "b.execution", "cache.success", "b.success", "cache.completion", "b.completion",
                "cache.serialization", "b.serialization",
            ])
        // The async call returns the last delivery.
        let last = try await client.execute(TestEndpoint("users/1"), as: User.self)
        #expect(last.name == "Ada")
    }

    @Test func finishFalseInCompletionPassesTheRestOfCompletionThenCarriesOn() async throws {
        let early = Probe(
            name: "a", recorder: recorder,
            onCompletion: { chain, _ in chain.complete(with: Data(#"{"id":5,"name":"Early"}"#.utf8), finish: false) })
        let client = try client([early, Probe(name: "b", recorder: recorder)])
        var names: [String] = []
        for await delivery in client.responses(TestEndpoint("users/1"), as: User.self) {
            names.append(delivery.value?.name ?? "error")
        }
        #expect(names == ["Early", "Ada"])
        #expect(
            recorder.events == [
                "a.execution", "b.execution", "a.success", "b.success", "a.completion",
                "b.completion", "a.serialization", "b.serialization",
                "b.completion", "a.serialization", "b.serialization",
            ])
        #expect(recorder.events.filter { $0 == "a.completion" }.count == 1)
    }

    @Test func completionHandlerIsCalledOncePerDelivery() async throws {
        let cache = Probe(
            name: "cache", recorder: recorder,
            onExecution: { $0.complete(with: Data(#"{"id":1,"name":"Cached"}"#.utf8), finish: false) })
        let client = try client([cache])
        let deliveries = Mutex<[String]>([])
        let queue = DispatchQueue(label: "leash.tests.deliveries")
        let handle = client.execute(TestEndpoint("users/1"), queue: queue) { (response: Response<User>) in
            dispatchPrecondition(condition: .onQueue(queue))
            deliveries.withLock { $0.append(response.value?.name ?? "error") }
        }
        await handle.wait()
        queue.sync {}
        #expect(deliveries.withLock { $0 } == ["Cached", "Ada"])
    }

    @Test func serializationInterceptorReplacesTheResult() async throws {
        let probe = Probe(name: "a", recorder: recorder, onSerialization: { $0.fail(with: TestError(code: 7)) })
        let response = try await client([probe]).response(TestEndpoint("users/1"), as: User.self)
        #expect(response.error as? TestError == TestError(code: 7))
    }

    // MARK: Build errors and serialization

    @Test func encodingErrorGoesStraightToCompletionWithThePartialRequest() async throws {
        let requestURL = Mutex<String?>(nil)
        let probe = Probe(
            name: "a", recorder: recorder,
            onCompletion: { chain, _ in requestURL.withLock { $0 = chain.request.url?.absoluteString } })
        let response = try await client([probe]).response(
            TestEndpoint("users", .get, parameters: User(id: 1, name: "x")), as: User.self)
        #expect(name(of: response.error) == "encoding")
        #expect(recorder.events == ["a.completion", "a.serialization"])
        #expect(requestURL.withLock { $0 } == "https://api.test/v1")
        #expect(stub.requests.isEmpty)
    }

    @Test func emptyAcceptsNoBodyAndOtherTypesDoNot() async throws {
        let client = try client([])
        _ = try await client.execute(TestEndpoint("users/1", .delete), as: Empty.self)
        let response = await client.response(TestEndpoint("users/1", .delete), as: User.self)
        #expect(name(of: response.error) == "decoding")
    }

    @Test func badJSONIsADecodingErrorWithTheData() async throws {
        stub.stub(.get, "garbage", .json("not json"))
        let response = try await client([]).response(TestEndpoint("garbage"), as: User.self)
        guard case LeashError.decoding(_, let data)? = response.error else {
            Issue.record("expected decoding, got \(String(describing: response.error))")
            return
        }
        #expect(String(decoding: data, as: UTF8.self) == "not json")
    }

    @Test func stubDelayLongerThanTheTimeoutIsTimedOut() async throws {
        stub.stub(.get, "slow", .json("{}", delay: .seconds(5)))
        let response = try await client([]) { $0.timeout(0.05) }.response(TestEndpoint("slow"), as: Empty.self)
        #expect(name(of: response.error) == "timedOut")
    }

    // MARK: Cancellation

    enum Phase: String, CaseIterable, Sendable {
        case execution, transport, success, failure, completion, serialization
    }

    @Test(arguments: Phase.allCases)
    func cancellationEndsTheCallOnceAndRunsNoFurtherInterceptor(phase: Phase) async throws {
        stub.stub(.get, "slow", .json(#"{"id":1,"name":"A"}"#, delay: .seconds(30)))
        stub.stub(.get, "error", .status(500))
        // Wait until the task is cancelled, as an interceptor doing slow work would.
        let block: @Sendable () async -> Void = {
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
        }
        var probe = Probe(name: "a", recorder: recorder)
        switch phase {
        case .execution: probe.onExecution = { _ in await block() }
        case .transport: break
        case .success: probe.onSuccess = { _, _ in await block() }
        case .failure: probe.onFailure = { _, _ in await block() }
        case .completion: probe.onCompletion = { _, _ in await block() }
        case .serialization: probe.onSerialization = { _ in await block() }
        }
        let client = try client([probe, Probe(name: "b", recorder: recorder)])
        let path = phase == .transport ? "slow" : phase == .failure ? "error" : "users/1"
        let deliveries = Mutex<[String]>([])
        let handle = client.execute(TestEndpoint(path)) { (response: Response<User>) in
            deliveries.withLock { $0.append(name(of: response.error)) }
        }
        // Let the call reach the phase.
        let marker = phase == .transport ? "b.execution" : "a.\(phase.rawValue)"
        while !recorder.events.contains(marker) { try await Task.sleep(for: .milliseconds(2)) }
        handle.cancel()
        await handle.wait()
        #expect(deliveries.withLock { $0 } == ["CancellationError"])
        // Nothing ran after the phase that was cancelled.
        #expect(recorder.events.last == marker)
    }

    @Test func cancellingTheCallingTaskThrowsCancellationError() async throws {
        stub.stub(.get, "slow", .json("{}", delay: .seconds(30)))
        let client = try client([])
        let task = Task { try await client.execute(TestEndpoint("slow"), as: Empty.self) }
        try await Task.sleep(for: .milliseconds(20))
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}

/// Returns the body unchanged.
struct PassThrough: Serializer {
    func serialize(data: Data, response: HTTPURLResponse?) -> Data { data }
}
