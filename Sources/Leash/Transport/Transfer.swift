import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A request body read while it is sent: for uploads.
public enum UploadBody: Sendable, Hashable {
    /// Bytes already in memory.
    case data(Data)
    /// A file, read from disk piece by piece as it is sent.
    case file(URL)

    /// The body's length in bytes.
    ///
    /// - Throws: ``LeashError/transport(_:)`` with a ``TransferFailure`` when the file cannot be read.
    public func length() throws -> Int64 {
        switch self {
        case .data(let data):
            return Int64(data.count)
        case .file(let url):
            do {
                let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
                guard (attributes[.type] as? FileAttributeType) == .typeRegular else {
                    throw TransferFailure("\(url.path) is not a regular file")
                }
                return (attributes[.size] as? NSNumber)?.int64Value ?? 0
            } catch let failure as TransferFailure {
                throw LeashError.transport(failure)
            } catch {
                throw LeashError.transport(TransferFailure("cannot read the upload file \(url.path): \(error)"))
            }
        }
    }

    /// The whole body in memory: what a transport without streaming uploads sends.
    ///
    /// - Throws: ``LeashError/transport(_:)`` with a ``TransferFailure`` when the file cannot be read.
    public func contents() throws -> Data {
        switch self {
        case .data(let data):
            return data
        case .file(let url):
            do {
                // Read, not mapped: a mapped file that shrinks while it is sent would crash the process.
                return try Data(contentsOf: url)
            } catch {
                throw LeashError.transport(TransferFailure("cannot read the upload file \(url.path): \(error)"))
            }
        }
    }
}

/// How far a transfer has got.
public struct TransferProgress: Sendable, Hashable {
    /// Bytes sent (uploads) or received (downloads and streams) so far in this attempt.
    public var completedBytes: Int64
    /// The total, when known: the upload's length, or the response's `Content-Length`.
    public var expectedBytes: Int64?

    /// Creates a progress value.
    ///
    /// - Parameters:
    ///   - completedBytes: Bytes done so far.
    ///   - expectedBytes: The total, or `nil` when unknown.
    public init(completedBytes: Int64, expectedBytes: Int64?) {
        self.completedBytes = completedBytes
        self.expectedBytes = expectedBytes
    }

    /// `completedBytes / expectedBytes` between 0 and 1, or `nil` when the total is unknown.
    public var fractionCompleted: Double? {
        guard let expectedBytes, expectedBytes > 0 else { return nil }
        return min(1, Double(completedBytes) / Double(expectedBytes))
    }
}

/// A file or stream problem during a transfer: an upload file that cannot be read, a
/// destination that cannot be written. Leash delivers it as ``LeashError/transport(_:)``.
public struct TransferFailure: Error, CustomStringConvertible, Sendable {
    /// What went wrong, in words.
    public let description: String

    /// Creates a failure described in words.
    ///
    /// - Parameter description: What went wrong.
    public init(_ description: String) {
        self.description = description
    }
}

/// The body of a response, chunk by chunk as it arrives: what ``Transport/open(_:body:sent:)``
/// returns after the head.
///
/// Read it once. Stop reading early with ``cancel()``, which ends the transfer and frees
/// its connection.
public struct ResponseBody: AsyncSequence, Sendable {
    /// A chunk of the body.
    public typealias Element = Data

    private let nextChunk: @Sendable () async throws -> Data?
    private let cancelTransfer: @Sendable () -> Void

    /// Creates a body read with `next`.
    ///
    /// - Parameters:
    ///   - next: Returns the next chunk, or `nil` at the end; throws when the transfer fails.
    ///   - cancel: Ends the transfer early; `next` then returns `nil` or throws.
    public init(
        next: @escaping @Sendable () async throws -> Data?,
        cancel: @escaping @Sendable () -> Void
    ) {
        self.nextChunk = next
        self.cancelTransfer = cancel
    }

    /// A body already in memory, as one chunk.
    ///
    /// - Parameter data: The whole body.
    public init(_ data: Data) {
        let remaining = Locked<Data?>(data.isEmpty ? nil : data)
        self.init(next: { remaining.withLock { $0.take() } }, cancel: { remaining.withLock { $0 = nil } })
    }

    /// Ends the transfer without reading the rest of the body.
    public func cancel() {
        cancelTransfer()
    }

    /// Reads the whole body, failing once it grows past `limit` bytes.
    ///
    /// - Parameter limit: The most bytes to hold.
    /// - Returns: The body, or its first `limit` bytes when `truncating` is `true`.
    func collect(upTo limit: Int, truncating: Bool = false) async throws -> Data {
        var data = Data()
        for try await chunk in self {
            if data.count + chunk.count > limit {
                if truncating {
                    data.append(chunk.prefix(limit - data.count))
                    cancel()
                    return data
                }
                cancel()
                throw TransferFailure("the response body is larger than \(limit) bytes")
            }
            data.append(chunk)
        }
        return data
    }

    /// Creates the iterator.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(nextChunk: nextChunk)
    }

    /// Reads the chunks in order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let nextChunk: @Sendable () async throws -> Data?

        /// The next chunk, or `nil` at the end of the body.
        public mutating func next() async throws -> Data? {
            try await nextChunk()
        }
    }
}

extension Transport {
    /// Sends `request` with `body` and returns the response head and its whole body as one
    /// chunk: what a transport that does not stream gets by default.
    ///
    /// The upload is read into memory first, and `sent` hears of it once, at the end.
    ///
    /// - Parameters:
    ///   - request: The request, fully built; its own body is replaced by `body` when given.
    ///   - body: What to upload, or `nil`.
    ///   - sent: Told how much of `body` has been sent.
    /// - Returns: The response head and body.
    /// - Throws: As ``Transport/send(_:)``.
    public func open(
        _ request: URLRequest,
        body: UploadBody?,
        sent: @escaping @Sendable (TransferProgress) -> Void
    ) async throws -> (HTTPURLResponse, ResponseBody) {
        var request = request
        if let body {
            request.httpBody = try body.contents()
        }
        let (data, head) = try await send(request)
        if let length = request.httpBody.map({ Int64($0.count) }), body != nil {
            sent(TransferProgress(completedBytes: length, expectedBytes: length))
        }
        return (head, ResponseBody(data))
    }

    /// Writes the body that ``open(_:body:sent:)`` returns to `file`, chunk by chunk, reading
    /// the next chunk only once the last is written.
    ///
    /// - Parameters:
    ///   - request: The request, fully built.
    ///   - file: Where to write the body; created or truncated.
    ///   - received: Told how many bytes have been written, and how many are expected.
    /// - Returns: The response head.
    /// - Throws: As ``Transport/download(_:to:received:)``.
    public func download(
        _ request: URLRequest,
        to file: URL,
        received: @escaping @Sendable (TransferProgress) -> Void
    ) async throws -> HTTPURLResponse {
        let (head, body) = try await open(request, body: nil, sent: { _ in })
        defer { body.cancel() }
        guard FileManager.default.createFile(atPath: file.path, contents: nil),
            let handle = try? FileHandle(forWritingTo: file)
        else {
            throw TransferFailure("cannot create a file in \(file.deletingLastPathComponent().path)")
        }
        defer { try? handle.close() }
        let expected = head.expectedContentLength >= 0 ? head.expectedContentLength : nil
        var written: Int64 = 0
        received(TransferProgress(completedBytes: 0, expectedBytes: expected))
        for try await chunk in body {
            do {
                try handle.write(contentsOf: chunk)
            } catch {
                throw TransferFailure("cannot write \(file.path): \(error)")
            }
            written += Int64(chunk.count)
            received(TransferProgress(completedBytes: written, expectedBytes: expected))
        }
        return head
    }
}

/// Chunks handed from a producer to one reader: a transport's callbacks to the pipeline, or
/// the pipeline to a stream's consumer.
///
/// ``send(_:)`` waits while more than `limit` bytes are waiting to be read (backpressure);
/// ``append(_:)`` never waits, for producers that cannot (URLSession's delegate).
package final class ChunkChannel: Sendable {
    private struct State {
        var chunks: [Data] = []
        var head = 0
        var buffered = 0
        var end: (any Error)?? = nil
        var reader: CheckedContinuation<Data?, any Error>?
        var writer: CheckedContinuation<Void, any Error>?
        var readerGone = false
    }

    private let state = Locked(State())
    private let limit: Int
    private static let batchLimit = 4 << 20
    private let onReaderGone: @Sendable () -> Void

    /// Creates a channel.
    ///
    /// - Parameters:
    ///   - limit: How many bytes may wait before ``send(_:)`` waits.
    ///   - onReaderGone: Called once when the reader stops early (cancelled or ``close()``).
    package init(limit: Int = 1 << 20, onReaderGone: @escaping @Sendable () -> Void = {}) {
        self.limit = limit
        self.onReaderGone = onReaderGone
    }

    /// Adds a chunk without waiting.
    package func append(_ chunk: Data) {
        let reader = state.withLock { state -> CheckedContinuation<Data?, any Error>? in
            guard state.end == nil, !state.readerGone else { return nil }
            if let reader = state.reader {
                state.reader = nil
                return reader
            }
            state.chunks.append(chunk)
            state.buffered += chunk.count
            return nil
        }
        reader?.resume(returning: chunk)
    }

    /// Adds a chunk, waiting while the reader is behind.
    ///
    /// - Throws: `CancellationError` when the reader has gone or the writer's task is cancelled.
    package func send(_ chunk: Data) async throws {
        append(chunk)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    // Checked under the lock: a cancel that came before the writer was stored
                    // found nothing to resume.
                    if state.readerGone || Task.isCancelled { return .failure(CancellationError()) }
                    if state.buffered <= limit { return .success(()) }
                    state.writer = continuation
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let writer = state.withLock { state in
                defer { state.writer = nil }
                return state.writer
            }
            writer?.resume(throwing: CancellationError())
        }
    }

    /// Ends the body: normally with `nil`, or with the error the reader will throw.
    package func finish(throwing error: (any Error)? = nil) {
        let reader = state.withLock { state -> CheckedContinuation<Data?, any Error>? in
            guard state.end == nil else { return nil }
            state.end = .some(error)
            defer { state.reader = nil }
            return state.head == state.chunks.count ? state.reader : nil
        }
        if let error { reader?.resume(throwing: error) } else { reader?.resume(returning: nil) }
    }

    /// The reader stops early: a waiting ``next()`` throws `CancellationError`, and so does the
    /// producer's next ``send(_:)``.
    package func close() {
        let (reader, writer, first) = state.withLock { state in
            let first = !state.readerGone
            state.readerGone = true
            state.chunks = []
            state.head = 0
            state.buffered = 0
            defer {
                state.reader = nil
                state.writer = nil
            }
            return (state.reader, state.writer, first)
        }
        reader?.resume(throwing: CancellationError())
        writer?.resume(throwing: CancellationError())
        if first { onReaderGone() }
    }

    /// The next chunk, or `nil` at the end.
    ///
    /// - Throws: The producer's error, or `CancellationError` when the reading task is cancelled
    ///   (which also closes the channel).
    package func next() async throws -> Data? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
                let (outcome, writer) = state.withLock {
                    state -> (Result<Data?, any Error>?, CheckedContinuation<Void, any Error>?) in
                    if state.readerGone || Task.isCancelled { return (.failure(CancellationError()), nil) }
                    if state.head < state.chunks.count {
                        // A reader that fell behind takes what is waiting in one piece (up to
                        // `batchLimit`), so the per-chunk cost does not keep it behind.
                        var chunk = state.chunks[state.head]
                        state.head += 1
                        if state.head < state.chunks.count {
                            while state.head < state.chunks.count,
                                chunk.count + state.chunks[state.head].count <= Self.batchLimit
                            {
                                chunk.append(state.chunks[state.head])
                                state.head += 1
                            }
                        }
                        state.buffered -= chunk.count
                        if state.head == state.chunks.count {
                            state.chunks.removeAll(keepingCapacity: true)
                            state.head = 0
                        }
                        var writer: CheckedContinuation<Void, any Error>?
                        if state.buffered <= limit {
                            writer = state.writer
                            state.writer = nil
                        }
                        return (.success(chunk), writer)
                    }
                    if let end = state.end {
                        return (end.map { .failure($0) } ?? .success(nil), nil)
                    }
                    state.reader = continuation
                    return (nil, nil)
                }
                writer?.resume()
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            close()
        }
    }
}
