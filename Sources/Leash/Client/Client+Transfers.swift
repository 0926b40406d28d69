import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Client {
    /// Calls `endpoint` and writes the response body to `destination` as it arrives, without
    /// holding it in memory.
    ///
    /// ```swift
    /// let head = try await client.download(FilesEndpoint.archive(id: 7), to: archiveURL) { progress in
    ///     print(progress.completedBytes, progress.expectedBytes ?? -1)
    /// }
    /// ```
    ///
    /// The body goes to a hidden file beside `destination` and is moved into place (replacing
    /// any file there) only when the call succeeds: a failed, cancelled or retried download
    /// leaves nothing at `destination`. Interceptors run as for any call: Execution before the
    /// transfer; Success or Failure on the response head (with empty data) once the body is on
    /// disk, or Failure when the transfer fails part-way (a retry starts the download again);
    /// Completion at the end. The transport writes the body itself
    /// (``Transport/download(_:to:received:)``), so memory stays flat however large it is. When
    /// an interceptor completes the call with data instead, that data is written to
    /// `destination`. An unacceptable status throws ``LeashError/unacceptableStatusCode(_:response:data:)``
    /// carrying the first megabyte of the body, and writes nothing.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint.
    ///   - destination: The file to write.
    ///   - progress: Told how many bytes have arrived, and how many are expected when the
    ///     server sent `Content-Length`; starts again from 0 on a retry.
    /// - Returns: The response head (a `200` head for the base URL when an interceptor completed
    ///   the call without one).
    /// - Throws: A ``LeashError`` (``TransferFailure`` inside ``LeashError/transport(_:)`` when
    ///   `destination` cannot be written), an error an interceptor completed with, or
    ///   `CancellationError`.
    @discardableResult
    public func download(
        _ endpoint: any Endpoint,
        to destination: URL,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws -> HTTPURLResponse {
        let sink = FileSink(destination: destination, progress: progress)
        defer { sink.discard() }
        let plan = TransferPlan(kind: .download, upload: nil, sink: sink, sent: { _ in })
        let (data, head) = try await transfer(endpoint, plan)
        try sink.commit(data, head: head)
        return head
    }

    /// Calls `endpoint` with the contents of `file` as the request body, read from disk as it
    /// is sent.
    ///
    /// The file replaces any body the endpoint encodes; the request gets `Content-Length` and,
    /// unless the endpoint set one, `Content-Type: application/octet-stream`. A retry sends the
    /// file again from the start.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint.
    ///   - file: The file to send.
    ///   - progress: Told how many bytes have been sent out of the file's length.
    /// - Returns: The response body and head (a `200` head for the base URL when an interceptor
    ///   completed the call without one).
    /// - Throws: A ``LeashError`` (``TransferFailure`` inside ``LeashError/transport(_:)`` when
    ///   `file` cannot be read; nothing is sent then), an error an interceptor completed with,
    ///   or `CancellationError`.
    public func upload(
        _ endpoint: any Endpoint,
        from file: URL,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws -> (Data, HTTPURLResponse) {
        try await upload(endpoint, body: .file(file), progress: progress)
    }

    /// Calls `endpoint` with `data` as the request body, reporting progress as it is sent.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint.
    ///   - data: The bytes to send.
    ///   - progress: Told how many bytes have been sent.
    /// - Returns: The response body and head (a `200` head for the base URL when an interceptor
    ///   completed the call without one).
    /// - Throws: A ``LeashError``, an error an interceptor completed with, or `CancellationError`.
    public func upload(
        _ endpoint: any Endpoint,
        from data: Data,
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws -> (Data, HTTPURLResponse) {
        try await upload(endpoint, body: .data(data), progress: progress)
    }

    /// Calls `endpoint` and hands over the response body chunk by chunk as it arrives:
    /// server-sent events, chunked transfer, long bodies read piece by piece.
    ///
    /// ```swift
    /// for try await line in client.stream(EventsEndpoint.live).lines {
    ///     print(line)
    /// }
    /// ```
    ///
    /// The call starts when iteration starts; each iteration is a new call. Ending the loop
    /// early, or cancelling the task that reads, cancels the request. The sequence throws the
    /// call's error: an unacceptable status before any chunk, or a failure part-way. Retries
    /// (``InterceptorChain/retry()``) restart the request until the first chunk has been handed
    /// over; after that the stream ends with the error instead, so no chunk arrives twice.
    /// Leash waits for the reader before reading more from the network, where the transport
    /// allows it (URLSession on Linux cannot pause a transfer, so a slow reader there buffers
    /// in memory).
    ///
    /// - Parameter endpoint: The endpoint.
    /// - Returns: The body's chunks.
    public func stream(_ endpoint: any Endpoint) -> ResponseStream {
        ResponseStream(client: self, endpoint: endpoint)
    }

    private func upload(
        _ endpoint: any Endpoint,
        body: UploadBody,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws -> (Data, HTTPURLResponse) {
        let plan = TransferPlan(kind: .upload, upload: body, sink: CollectingSink(), sent: progress ?? { _ in })
        return try await transfer(endpoint, plan)
    }

    /// Runs a transfer call and returns its body and head.
    func transfer(_ endpoint: any Endpoint, _ plan: TransferPlan) async throws -> (Data, HTTPURLResponse) {
        // Transfers deliver one result: `finish: false` results are not delivered.
        let response = await Call(
            client: self, endpoint: endpoint, serializer: RawDataSerializer(), runsSerializationInterceptors: false,
            deliverInterim: nil, transfer: plan
        ).run()
        let data = try response.result.get()
        if let head = response.extra as? HTTPURLResponse { return (data, head) }
        // An interceptor completed the call with data alone: a plain 200 stands in for the head.
        let head = HTTPURLResponse(url: manager.baseURL, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])
        return (data, head!)
    }
}

/// The body of one call, chunk by chunk as it arrives: ``Client/stream(_:)``.
public struct ResponseStream: AsyncSequence, Sendable {
    /// A chunk of the body.
    public typealias Element = Data

    let client: Client
    let endpoint: any Endpoint

    /// The body split into lines, without their `\n` or `\r\n`: for server-sent events and
    /// line-delimited JSON. A last line without a newline is returned too.
    public var lines: ResponseLines {
        ResponseLines(base: self)
    }

    /// Starts the call.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(state: StreamState(client: client, endpoint: endpoint))
    }

    /// Reads the chunks in order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let state: StreamState

        /// The next chunk, or `nil` at the end of the body.
        ///
        /// - Throws: The call's error, or `CancellationError`.
        public mutating func next() async throws -> Data? {
            try await state.next()
        }
    }
}

/// One iteration of a ``ResponseStream``: the call's task and the channel it fills. Dropping
/// the iterator cancels the call.
private final class StreamState: Sendable {
    private let client: Client
    private let endpoint: any Endpoint
    private let task = Locked<Task<Void, Never>?>(nil)
    private let started = Locked(false)
    let channel: ChunkChannel

    init(client: Client, endpoint: any Endpoint) {
        self.client = client
        self.endpoint = endpoint
        let task = self.task
        self.channel = ChunkChannel(onReaderGone: { task.withLock { $0 }?.cancel() })
    }

    deinit {
        channel.close()
    }

    func next() async throws -> Data? {
        let first = started.withLock { started in
            defer { started = true }
            return !started
        }
        if first { start() }
        return try await channel.next()
    }

    private func start() {
        let sink = ChannelSink(channel: channel)
        let plan = TransferPlan(kind: .stream, upload: nil, sink: sink, sent: { _ in })
        let (client, endpoint, channel) = (client, endpoint, channel)
        let task = Task {
            do {
                let (data, _) = try await client.transfer(endpoint, plan)
                // An interceptor supplied the result instead of the network: hand it over whole.
                if !sink.hasDelivered, !data.isEmpty { channel.append(data) }
                channel.finish()
            } catch {
                channel.finish(throwing: error)
            }
        }
        self.task.withLock { $0 = task }
    }
}

/// The lines of a ``ResponseStream``.
public struct ResponseLines: AsyncSequence, Sendable {
    /// One line, decoded as UTF-8.
    public typealias Element = String

    let base: ResponseStream

    /// Starts the call.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(chunks: base.makeAsyncIterator())
    }

    /// Reads the lines in order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var chunks: ResponseStream.AsyncIterator
        /// Bytes read but not yet returned start at `start`; those before `scanned` hold no
        /// newline, so each byte is searched once however long the line.
        var buffer: [UInt8] = []
        var start = 0
        var scanned = 0
        var ended = false

        /// The next line, or `nil` at the end of the body.
        ///
        /// - Throws: The call's error, or `CancellationError`.
        public mutating func next() async throws -> String? {
            while true {
                if let newline = buffer[scanned...].firstIndex(of: UInt8(ascii: "\n")) {
                    var end = newline
                    if end > start, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                    let line = String(decoding: buffer[start..<end], as: UTF8.self)
                    start = newline + 1
                    scanned = start
                    return line
                }
                scanned = buffer.count
                if ended {
                    guard start < buffer.count else { return nil }
                    defer { start = buffer.count }
                    return String(decoding: buffer[start...], as: UTF8.self)
                }
                if let chunk = try await chunks.next() {
                    // Drop the lines already returned before growing the buffer.
                    if start > 0 {
                        buffer.removeFirst(start)
                        scanned -= start
                        start = 0
                    }
                    buffer.append(contentsOf: chunk)
                } else {
                    ended = true
                }
            }
        }
    }
}
