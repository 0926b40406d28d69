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
/// - `request.timeoutInterval` bounds the whole attempt of an ordinary call (for downloads,
///   uploads and streams, the wait for the response head or first bytes), and running out of it is
///   ``LeashError/timedOut``. swift-corelibs-foundation does not apply the request's timeout
///   (a test here shows a 1-second one ignored), and Apple's URLSession treats it as an idle
///   timeout, so the transport keeps its own deadline: a dispatch timer per request.
///
/// Redirects are followed as the redirect rule says: one to another origin drops
/// `Authorization`, `Proxy-Authorization` and `Cookie`; HTTPS → HTTP is refused with
/// ``RedirectRefused`` unless `allowsInsecureRedirects`.
///
/// On Linux URLSession cannot check server certificates against pins and `URLCache` does
/// not store network responses. swift-corelibs-foundation 6.3.1 also stops the process
/// (`fatalError`, swift-corelibs-foundation issue 5285) when a server closes the connection in
/// the middle of the response headers: against servers you do not control on Linux, prefer
/// `AsyncHTTPClientTransport`.
public final class URLSessionTransport: Transport {
    /// The session requests go through.
    public let session: URLSession
    private let delegate: SessionDelegate

    /// Creates a transport with its own session, trusting the system's roots.
    ///
    /// - Parameters:
    ///   - configuration: The session's configuration; `.default` unless given.
    ///   - allowsInsecureRedirects: Follow redirects from HTTPS to plain HTTP; `false` by default.
    public convenience init(configuration: URLSessionConfiguration = .default, allowsInsecureRedirects: Bool = false) {
        self.init(configuration: configuration, allowsInsecureRedirects: allowsInsecureRedirects, trust: nil)
    }

    private init(configuration: URLSessionConfiguration, allowsInsecureRedirects: Bool, trust: ServerTrustEvaluator?) {
        let delegate = SessionDelegate(allowsInsecureRedirects: allowsInsecureRedirects, trust: trust)
        self.delegate = delegate
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    /// Creates a transport with its own session and a trust policy.
    ///
    /// On Apple platforms the session's delegate enforces the policy in every server-trust
    /// challenge: ``TrustPolicy/pinnedCertificates(_:)`` become the only anchors of the
    /// platform's evaluation; ``TrustPolicy/pinnedPublicKeys(_:)`` run after the platform's
    /// evaluation and need a certificate in the chain whose key is pinned for the host (a host
    /// without pins is refused). A refused server ends the call with
    /// ``LeashError/transport(_:)`` carrying a ``PinningFailure``.
    ///
    /// URLSession on Linux never delivers server-trust challenges, so a policy other than
    /// ``TrustPolicy/system`` cannot be enforced there: this initializer throws rather than
    /// connect unpinned. Use `AsyncHTTPClientTransport` from `LeashAsyncHTTPClient` for pinned
    /// certificates on Linux.
    ///
    /// - Parameters:
    ///   - configuration: The session's configuration.
    ///   - trustPolicy: Which servers to trust.
    ///   - allowsInsecureRedirects: Follow redirects from HTTPS to plain HTTP; `false` by default.
    /// - Throws: ``LeashError/invalidConfiguration(_:)`` for a policy this platform cannot enforce,
    ///   or pins that are not base64 SHA-256 digests.
    public convenience init(
        configuration: URLSessionConfiguration = .default,
        trustPolicy: TrustPolicy,
        allowsInsecureRedirects: Bool = false
    ) throws {
        guard trustPolicy != .system else {
            self.init(configuration: configuration, allowsInsecureRedirects: allowsInsecureRedirects, trust: nil)
            return
        }
        #if canImport(Security)
            self.init(
                configuration: configuration, allowsInsecureRedirects: allowsInsecureRedirects,
                trust: try ServerTrustEvaluator(policy: trustPolicy))
        #else
            throw LeashError.invalidConfiguration(
                "URLSessionTransport cannot enforce \(trustPolicy.name) on this platform; "
                    + "use AsyncHTTPClientTransport from LeashAsyncHTTPClient, or TrustPolicy.system")
        #endif
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
                    let refused = identifier.flatMap { delegate.takeFailure(for: $0) }
                    handle.finish()
                    if let refused {
                        continuation.resume(throwing: LeashError.transport(refused))
                    } else if let challenged {
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

    /// Sends `request`, uploading `body` from memory or straight from its file, and returns once
    /// the response head arrives; the body follows as URLSession delivers it.
    ///
    /// `request.timeoutInterval` bounds the wait for the head. URLSession on Linux cannot pause
    /// a transfer (suspending a task restarts it there), so chunks wait in memory until read.
    ///
    /// - Parameters:
    ///   - request: The request; its own body is replaced by `body` when given.
    ///   - body: What to upload, or `nil`.
    ///   - sent: Told how much of `body` has been sent.
    /// - Returns: The response head and its body.
    /// - Throws: `CancellationError`, ``LeashError/timedOut``, or the `URLError`.
    public func open(
        _ request: URLRequest,
        body: UploadBody?,
        sent: @escaping @Sendable (TransferProgress) -> Void
    ) async throws -> (HTTPURLResponse, ResponseBody) {
        let handle = TaskHandle()
        let channel = ChunkChannel(limit: .max, onReaderGone: { handle.cancel() })
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task: URLSessionTask
                switch body {
                case .file(let url): task = session.uploadTask(with: request, fromFile: url)
                case .data(let data): task = session.uploadTask(with: request, from: data)
                case nil: task = session.dataTask(with: request)
                }
                let exchange = Exchange(handle: handle, channel: channel, head: continuation, sent: sent)
                delegate.register(exchange, for: task.taskIdentifier)
                handle.start(task, timeout: request.timeoutInterval)
            }
        } onCancel: {
            handle.cancel()
        }
    }

    /// Sends `request` as a URLSession download task, which writes the body to disk as it
    /// arrives without holding it in memory, and moves it to `file` once complete.
    ///
    /// `request.timeoutInterval` bounds the wait for the first bytes of the body.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - file: Where the body goes; replaced if it exists.
    ///   - received: Told how many bytes have been written, and how many are expected.
    /// - Returns: The response head.
    /// - Throws: `CancellationError`, ``LeashError/timedOut``, the `URLError`, or a
    ///   ``TransferFailure`` when `file` cannot be written.
    public func download(
        _ request: URLRequest,
        to file: URL,
        received: @escaping @Sendable (TransferProgress) -> Void
    ) async throws -> HTTPURLResponse {
        let handle = TaskHandle()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.downloadTask(with: request)
                let download = Download(handle: handle, file: file, head: continuation, received: received)
                delegate.register(download, for: task.taskIdentifier)
                handle.start(task, timeout: request.timeoutInterval)
            }
        } onCancel: {
            handle.cancel()
        }
    }

    fileprivate static func translate(_ error: any Error, handle: TaskHandle) -> any Error {
        if error is LeashError { return error }
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
        var task: URLSessionTask?
        var identifier: Int?
        var deadline: (any DispatchSourceTimer)?
        var cancelled = false
        var timedOut = false
    }

    private let state = Locked(State())

    var identifier: Int? { state.withLock { $0.identifier } }
    var isCancelled: Bool { state.withLock { $0.cancelled } }
    var isTimedOut: Bool { state.withLock { $0.timedOut } }

    func start(_ task: URLSessionTask, timeout: TimeInterval) {
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

/// One transfer task's way back to `open`: the head once, then the body's chunks.
private final class Exchange: Sendable {
    let handle: TaskHandle
    let channel: ChunkChannel
    let sent: @Sendable (TransferProgress) -> Void
    private let head: Locked<CheckedContinuation<(HTTPURLResponse, ResponseBody), any Error>?>

    init(
        handle: TaskHandle,
        channel: ChunkChannel,
        head: CheckedContinuation<(HTTPURLResponse, ResponseBody), any Error>,
        sent: @escaping @Sendable (TransferProgress) -> Void
    ) {
        self.handle = handle
        self.channel = channel
        self.head = Locked(head)
        self.sent = sent
    }

    /// Hands the head to `open`; the deadline no longer applies.
    func received(_ response: HTTPURLResponse) {
        guard let continuation = head.withLock({ $0.take() }) else { return }
        handle.finish()
        let channel = channel
        continuation.resume(
            returning: (response, ResponseBody(next: { try await channel.next() }, cancel: { channel.close() })))
    }

    /// The task ended: ends the body, or fails `open` when no head came.
    func completed(error: (any Error)?, challenged: HTTPURLResponse?) {
        if let challenged {
            received(challenged)
            channel.finish()
            return
        }
        let error = error.map { URLSessionTransport.translate($0, handle: handle) }
        if let continuation = head.withLock({ $0.take() }) {
            handle.finish()
            continuation.resume(throwing: error ?? LeashError.transport(URLError(.badServerResponse)))
        } else {
            channel.finish(throwing: error)
        }
    }
}

/// One download task's way back to `download`.
private final class Download: Sendable {
    let handle: TaskHandle
    let file: URL
    let received: @Sendable (TransferProgress) -> Void
    private let head: Locked<CheckedContinuation<HTTPURLResponse, any Error>?>
    private let failure = Locked<(any Error)?>(nil)

    init(
        handle: TaskHandle,
        file: URL,
        head: CheckedContinuation<HTTPURLResponse, any Error>,
        received: @escaping @Sendable (TransferProgress) -> Void
    ) {
        self.handle = handle
        self.file = file
        self.head = Locked(head)
        self.received = received
    }

    /// Bytes are arriving: the head came, so the deadline no longer applies.
    func wrote(_ progress: TransferProgress) {
        handle.finish()
        received(progress)
    }

    /// Moves URLSession's file into place; it is deleted once the callback returns.
    func finished(at location: URL) {
        let manager = FileManager.default
        try? manager.removeItem(at: file)
        do {
            // A rename when both are on one file system, otherwise a copy.
            try manager.moveItem(at: location, to: file)
        } catch {
            do {
                try manager.copyItem(at: location, to: file)
            } catch {
                failure.withLock { $0 = TransferFailure("cannot write \(file.path): \(error)") }
            }
        }
    }

    func completed(_ task: URLSessionTask, error: (any Error)?, challenged: HTTPURLResponse?) {
        guard let continuation = head.withLock({ $0.take() }) else { return }
        handle.finish()
        if let challenged {
            _ = FileManager.default.createFile(atPath: file.path, contents: nil)
            continuation.resume(returning: challenged)
        } else if let error {
            continuation.resume(throwing: URLSessionTransport.translate(error, handle: handle))
        } else if let failure = failure.withLock({ $0 }) {
            continuation.resume(throwing: failure)
        } else if let response = task.response as? HTTPURLResponse {
            if !FileManager.default.fileExists(atPath: file.path) {
                _ = FileManager.default.createFile(atPath: file.path, contents: nil)
            }
            continuation.resume(returning: response)
        } else {
            continuation.resume(throwing: LeashError.transport(URLError(.badServerResponse)))
        }
    }
}

/// Answers authentication challenges so that no task waits forever for a credential, and
/// routes the callbacks of transfer tasks to their ``Exchange``.
private final class SessionDelegate: NSObject, URLSessionDataDelegate, URLSessionDownloadDelegate,
    @unchecked Sendable
{
    // Safe: the mutable state (`challenged`, `refused`, `exchanges`, `downloads`) is each behind a
    // lock; `allowsInsecureRedirects` and `trust` never change.
    private let challenged = Locked<[Int: HTTPURLResponse]>([:])
    /// Why the delegate ended a task: a refused redirect (``RedirectRefused``) or a refused
    /// server (``PinningFailure``).
    private let refused = Locked<[Int: any Error]>([:])
    private let exchanges = Locked<[Int: Exchange]>([:])
    private let downloads = Locked<[Int: Download]>([:])
    private let allowsInsecureRedirects: Bool
    /// Enforces a trust policy other than `.system` (Apple platforms only).
    private let trust: ServerTrustEvaluator?

    init(allowsInsecureRedirects: Bool, trust: ServerTrustEvaluator?) {
        self.allowsInsecureRedirects = allowsInsecureRedirects
        self.trust = trust
    }

    func takeFailure(for identifier: Int) -> (any Error)? {
        refused.withLock { $0.removeValue(forKey: identifier) }
    }

    /// Follows a redirect as the redirect rule says; a refused one ends the task, which then
    /// fails with ``RedirectRefused``.
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        guard let source = response.url ?? task.currentRequest?.url else {
            completionHandler(request)
            return
        }
        do {
            completionHandler(try RedirectRule.follow(request, from: source, allowsDowngrade: allowsInsecureRedirects))
        } catch let error as RedirectRefused {
            refused.withLock { $0[task.taskIdentifier] = error }
            completionHandler(nil)
        } catch {
            completionHandler(nil)
        }
    }

    /// The error a task ends with when the delegate refused its redirect or server, else `error`.
    private func outcome(of task: URLSessionTask, _ error: (any Error)?) -> (any Error)? {
        takeFailure(for: task.taskIdentifier).map { LeashError.transport($0) } ?? error
    }

    func takeChallengedResponse(for identifier: Int) -> HTTPURLResponse? {
        challenged.withLock { $0.removeValue(forKey: identifier) }
    }

    func register(_ exchange: Exchange, for identifier: Int) {
        exchanges.withLock { $0[identifier] = exchange }
    }

    func register(_ download: Download, for identifier: Int) {
        downloads.withLock { $0[identifier] = download }
    }

    func urlSession(
        _ session: URLSession,
        downloadTask: URLSessionDownloadTask,
        didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64
    ) {
        downloads.withLock { $0[downloadTask.taskIdentifier] }?.wrote(
            TransferProgress(
                completedBytes: totalBytesWritten,
                expectedBytes: totalBytesExpectedToWrite >= 0 ? totalBytesExpectedToWrite : nil))
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        downloads.withLock { $0[downloadTask.taskIdentifier] }?.finished(at: location)
    }

    private func exchange(for task: URLSessionTask) -> Exchange? {
        exchanges.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        // The answer to a refused redirect is not a response: the task fails instead.
        if refused.withLock({ $0[dataTask.taskIdentifier] != nil }) {
            completionHandler(.cancel)
            return
        }
        if let response = response as? HTTPURLResponse {
            exchange(for: dataTask)?.received(response)
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        exchange(for: dataTask)?.channel.append(data)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        exchange(for: task)?.sent(
            TransferProgress(
                completedBytes: totalBytesSent,
                expectedBytes: totalBytesExpectedToSend >= 0 ? totalBytesExpectedToSend : nil))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let download = downloads.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) {
            download.completed(
                task, error: outcome(of: task, error), challenged: takeChallengedResponse(for: task.taskIdentifier))
            return
        }
        guard let exchange = exchanges.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        exchange.completed(
            error: outcome(of: task, error), challenged: takeChallengedResponse(for: task.taskIdentifier))
    }

    #if !canImport(Darwin)
        // Apple's URLSession returns the 401 itself when no credential is offered, so the
        // delegate answers authentication challenges on Linux only. swift-corelibs-foundation
        // waits forever for a credential: declining ends the task with URLError(.cancelled), and
        // the response is remembered so send() returns it instead.
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
    #elseif canImport(Security)
        // Apple platforms: with no session-level handler, server-trust challenges come here too.
        // The trust policy decides those; every other challenge gets URLSession's default
        // handling, which returns a 401 as a response.
        func urlSession(
            _ session: URLSession,
            task: URLSessionTask,
            didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            let space = challenge.protectionSpace
            guard let trust, space.authenticationMethod == NSURLAuthenticationMethodServerTrust,
                let serverTrust = space.serverTrust
            else {
                completionHandler(.performDefaultHandling, nil)
                return
            }
            do {
                try trust.evaluate(serverTrust, host: space.host)
                completionHandler(.useCredential, URLCredential(trust: serverTrust))
            } catch {
                refused.withLock { $0[task.taskIdentifier] = error }
                completionHandler(.cancelAuthenticationChallenge, nil)
            }
        }
    #endif
}
