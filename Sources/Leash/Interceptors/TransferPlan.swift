import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Which kind of transfer a call is: ``InterceptorChain/transfer``.
public enum TransferKind: Sendable, Hashable {
    /// `Client.download(_:to:progress:)`: the body goes to a file.
    case download
    /// `Client.upload(_:from:progress:)`: the request body comes from a file or data.
    case upload
    /// `Client.stream(_:)`: the body goes to the caller chunk by chunk.
    case stream
}

/// How a transfer call sends its request body and where the response body goes.
///
/// A class, so that ordinary calls carry one `nil` reference through the pipeline rather than
/// copying an optional of this size at every step.
final class TransferPlan: Sendable {
    let kind: TransferKind
    let upload: UploadBody?
    let sink: any TransferSink
    /// Told how much of the upload has been sent.
    let sent: @Sendable (TransferProgress) -> Void

    init(
        kind: TransferKind, upload: UploadBody?, sink: any TransferSink,
        sent: @escaping @Sendable (TransferProgress) -> Void
    ) {
        self.kind = kind
        self.upload = upload
        self.sink = sink
        self.sent = sent
    }
}

/// Where a transfer's response body goes, attempt after attempt.
protocol TransferSink: Sendable {
    /// Whether a new attempt may start: `false` once a stream has handed chunks to its reader.
    var canRestart: Bool { get }

    /// Takes one attempt's body; returns the data the call's result carries.
    func receive(_ body: ResponseBody, head: HTTPURLResponse) async throws -> Data
}

/// Collects the body in memory: uploads, whose answers are ordinary API responses.
struct CollectingSink: TransferSink {
    var canRestart: Bool { true }

    func receive(_ body: ResponseBody, head: HTTPURLResponse) async throws -> Data {
        var data = Data()
        for try await chunk in body {
            data.append(chunk)
        }
        return data
    }
}

/// Has the transport write the body to a hidden file beside the destination;
/// ``commit(_:head:)`` moves it into place once the call has succeeded, ``discard()`` removes it
/// otherwise.
final class FileSink: TransferSink {
    let destination: URL
    private let progress: @Sendable (TransferProgress) -> Void
    private let partial = Locked<URL?>(nil)
    /// The head of the attempt whose body is complete in `partial` and passed Success.
    private let completed = Locked<HTTPURLResponse?>(nil)

    init(destination: URL, progress: (@Sendable (TransferProgress) -> Void)?) {
        self.destination = destination
        self.progress = progress ?? { _ in }
    }

    var canRestart: Bool { true }

    /// Sends `request` through `transport`, writing the body to a new partial file.
    func download(_ request: URLRequest, through transport: any Transport) async throws -> HTTPURLResponse {
        discard()
        completed.withLock { $0 = nil }
        let file = destination.deletingLastPathComponent()
            .appendingPathComponent(".\(destination.lastPathComponent).\(UUID().uuidString).partial")
        partial.withLock { $0 = file }
        return try await transport.download(request, to: file, received: progress)
    }

    /// The first `limit` bytes of an unacceptable response's body; the file is removed.
    func errorBody(limit: Int) -> Data {
        defer { discard() }
        guard let file = partial.withLock({ $0 }), let handle = try? FileHandle(forReadingFrom: file) else {
            return Data()
        }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: limit)) ?? Data()
    }

    /// The attempt that answered with `head` downloaded the whole body and passed Success: its
    /// file is what ``commit(_:head:)`` puts in place if the call ends with that same head.
    func markComplete(_ head: HTTPURLResponse) {
        completed.withLock { $0 = head }
    }

    /// The body is already in the file: nothing more to read.
    func receive(_ body: ResponseBody, head: HTTPURLResponse) async throws -> Data {
        body.cancel()
        return Data()
    }

    /// Puts the downloaded file at the destination, replacing what was there, when the call
    /// ended with the head of a complete download; when an interceptor supplied the result
    /// instead (after a failure part-way, say), writes its `data` there and drops the file.
    func commit(_ data: Data, head: HTTPURLResponse) throws {
        let downloaded = completed.withLock { $0.take() } === head
        var file = partial.withLock { $0.take() }
        if !downloaded, let partial = file {
            try? FileManager.default.removeItem(at: partial)
            file = nil
        }
        do {
            if let file {
                // rename(2) replaces an existing destination in one step; the partial file is in
                // the same directory, so on the same file system. (FileManager.replaceItemAt fails
                // on Linux when the destination exists.)
                guard rename(file.path, destination.path) == 0 else {
                    throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                }
            } else {
                try data.write(to: destination, options: .atomic)
            }
        } catch {
            if let file { try? FileManager.default.removeItem(at: file) }
            throw LeashError.transport(TransferFailure("cannot write \(destination.path): \(error)"))
        }
    }

    /// Removes the partial file, if any.
    func discard() {
        if let file = partial.withLock({ $0.take() }) {
            try? FileManager.default.removeItem(at: file)
        }
    }
}

/// Hands chunks to a stream's reader, waiting while the reader is behind.
final class ChannelSink: TransferSink {
    let channel: ChunkChannel
    private let delivered = Locked(false)

    init(channel: ChunkChannel) {
        self.channel = channel
    }

    var canRestart: Bool { !delivered.withLock { $0 } }

    /// Whether any chunk reached the reader.
    var hasDelivered: Bool { delivered.withLock { $0 } }

    func receive(_ body: ResponseBody, head: HTTPURLResponse) async throws -> Data {
        for try await chunk in body where !chunk.isEmpty {
            delivered.withLock { $0 = true }
            try await channel.send(chunk)
        }
        return Data()
    }
}

extension URLRequest {
    /// The request for an upload of `body`: its own body removed, with `Content-Length`, and
    /// `Content-Type: application/octet-stream` unless the endpoint set one.
    func uploading(_ body: UploadBody?) throws -> URLRequest {
        guard let body else { return self }
        var request = self
        request.httpBody = nil
        request.setValue(String(try body.length()), forHTTPHeaderField: "Content-Length")
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        }
        return request
    }
}
