import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The default transport: a `URLSession` whose connections are kept alive across calls.
///
/// It smooths over what differs between platforms, so the pipeline sees the same thing
/// everywhere:
/// - a `401` or `407` that carries `WWW-Authenticate` comes back as a response. On Linux,
///   URLSession would wait forever for a credential; the transport declines the challenge
///   and returns the response head (the body is lost there);
/// - cancelling the calling task throws `CancellationError`, not `URLError(.cancelled)`;
/// - `request.timeoutInterval` bounds the whole attempt, and running out of it is
///   ``LeashError/timedOut``. swift-corelibs-foundation does not apply the request's timeout
///   (a test here shows a 1-second one ignored), and Apple's URLSession treats it as an idle
///   timeout, so the transport keeps its own deadline: a dispatch timer per request.
///
/// On Linux URLSession cannot check server certificates against pins and `URLCache` does
/// not store network responses.
public final class URLSessionTransport: Transport {
    /// The session requests go through.
    public let session: URLSession
    private let delegate: SessionDelegate

    /// Creates a transport with its own session, trusting the system's roots.
    ///
    /// - Parameter configuration: The session's configuration; `.default` unless given.
    public init(configuration: URLSessionConfiguration = .default) {
        let delegate = SessionDelegate()
        self.delegate = delegate
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    /// Creates a transport with its own session and a trust policy.
    ///
    /// URLSession on Linux never delivers server-trust challenges, so a policy other than
    /// ``TrustPolicy/system`` cannot be enforced there: this initializer throws rather than
    /// connect unpinned. Use `AsyncHTTPClientTransport` from `LeashAsyncHTTPClient` for pinned
    /// certificates on Linux. Pinning through URLSession on Apple platforms is not available yet
    /// and throws too.
    ///
    /// - Parameters:
    ///   - configuration: The session's configuration.
    ///   - trustPolicy: Which servers to trust.
    /// - Throws: ``LeashError/invalidConfiguration(_:)`` for a policy this platform cannot enforce.
    public convenience init(configuration: URLSessionConfiguration = .default, trustPolicy: TrustPolicy) throws {
        guard trustPolicy == .system else {
            throw LeashError.invalidConfiguration(
                "URLSessionTransport cannot enforce \(trustPolicy.name) on this platform; "
                    + "use AsyncHTTPClientTransport from LeashAsyncHTTPClient, or TrustPolicy.system")
        }
        self.init(configuration: configuration)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Sends `request` and returns the body and head of any HTTP response, whatever its status.
    ///
    /// - Parameter request: The request.
    /// - Returns: The body and the response head.
    /// - Throws: `CancellationError`, ``LeashError/timedOut``, or the `URLError`.
    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let handle = TaskHandle()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let delegate = self.delegate
                let task = session.dataTask(with: request) { data, response, error in
                    let identifier = handle.identifier
                    let challenged = identifier.flatMap { delegate.takeChallengedResponse(for: $0) }
                    handle.finish()
                    if let challenged {
                        continuation.resume(returning: (data ?? Data(), challenged))
                    } else if let error {
                        continuation.resume(throwing: Self.translate(error, handle: handle))
                    } else if let response = response as? HTTPURLResponse {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: LeashError.transport(URLError(.badServerResponse)))
                    }
                }
                handle.start(task, timeout: request.timeoutInterval)
            }
        } onCancel: {
            handle.cancel()
        }
    }

    private static func translate(_ error: any Error, handle: TaskHandle) -> any Error {
        guard let urlError = error as? URLError else { return LeashError.transport(error) }
        switch urlError.code {
        case .cancelled where handle.isCancelled: return CancellationError()
        case .cancelled where handle.isTimedOut: return LeashError.timedOut
        case .timedOut: return LeashError.timedOut
        default: return LeashError.transport(urlError)
        }
    }
}

/// The URLSession task of one `send`, so cancellation and the deadline can reach it from
/// another thread.
private final class TaskHandle: Sendable {
    private struct State {
        var task: URLSessionDataTask?
        var identifier: Int?
        var deadline: (any DispatchSourceTimer)?
        var cancelled = false
        var timedOut = false
    }

    private let state = Locked(State())

    var identifier: Int? { state.withLock { $0.identifier } }
    var isCancelled: Bool { state.withLock { $0.cancelled } }
    var isTimedOut: Bool { state.withLock { $0.timedOut } }

    func start(_ task: URLSessionDataTask, timeout: TimeInterval) {
        // A timer source rather than asyncAfter: cancelling a source frees it at once, while a
        // cancelled asyncAfter item stays queued (with its memory) until its deadline.
        var deadline: (any DispatchSourceTimer)?
        if timeout.isFinite, timeout > 0 {
            let timer = DispatchSource.makeTimerSource(queue: .global())
            timer.schedule(deadline: .now() + timeout)
            timer.setEventHandler { [weak self] in self?.timeOut() }
            deadline = timer
        }
        let cancelled = state.withLock { state in
            state.task = task
            state.identifier = task.taskIdentifier
            state.deadline = deadline
            return state.cancelled
        }
        // Resume even when cancelled, so the completion handler runs and the caller is resumed.
        // The timer is always resumed too: releasing a suspended dispatch source is a crash.
        task.resume()
        deadline?.resume()
        if cancelled { task.cancel() }
    }

    func cancel() {
        let task = state.withLock { state in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }

    /// The task ended: the deadline no longer matters.
    func finish() {
        let deadline = state.withLock { state in
            defer { state.deadline = nil }
            return state.deadline
        }
        deadline?.cancel()
    }

    private func timeOut() {
        let task = state.withLock { state in
            state.timedOut = true
            return state.task
        }
        task?.cancel()
    }
}

/// Answers authentication challenges so that no task waits forever for a credential.
private final class SessionDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    // Safe: the only stored state is `challenged`, which is behind a lock.
    private let challenged = Locked<[Int: HTTPURLResponse]>([:])

    func takeChallengedResponse(for identifier: Int) -> HTTPURLResponse? {
        challenged.withLock { $0.removeValue(forKey: identifier) }
    }

    #if !canImport(Darwin)
        // Apple's URLSession returns the 401 itself when no credential is offered, so the
        // delegate answers challenges on Linux only. swift-corelibs-foundation waits forever for
        // a credential: declining ends the task with URLError(.cancelled), and the response is
        // remembered so send() returns it instead.
        func urlSession(
            _ session: URLSession,
            task: URLSessionTask,
            didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            if let response = challenge.failureResponse as? HTTPURLResponse {
                challenged.withLock { $0[task.taskIdentifier] = response }
                completionHandler(.rejectProtectionSpace, nil)
            } else {
                completionHandler(.performDefaultHandling, nil)
            }
        }
    #endif
}
