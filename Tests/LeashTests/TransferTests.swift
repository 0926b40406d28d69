import Foundation
import Leash
import LeashInterceptors
import LeashTestServer
import LeashTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Downloads, uploads and streams against a real server on 127.0.0.1, through each transport.
@Suite struct TransferTests {
    /// A directory of its own for each test, removed afterwards.
    private func withDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("leash-transfer-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return try await run(
            { try await body(directory) }, thenAlways: { try FileManager.default.removeItem(at: directory) })
    }

    @Test(arguments: TransportKind.allCases)
    func downloadOf50MiBMatchesByteForByte(kind: TransportKind) async throws {
        try await withDirectory { directory in
            let source = try TransferServer.makeFile(in: directory, megabytes: 50)
            let destination = directory.appendingPathComponent("download.bin")
            let seen = Mutex<[TransferProgress]>([])
            try await withTransferServer(kind, serving: source) { client, _ in
                let head = try await client.download(TestEndpoint("file"), to: destination) { progress in
                    seen.withLock { $0.append(progress) }
                }
                #expect(head.statusCode == 200)
            }
            #expect(try await sha256(of: destination) == (try await sha256(of: source)))
            let progress = seen.withLock { $0 }
            #expect(progress.last == TransferProgress(completedBytes: 50 << 20, expectedBytes: 50 << 20))
            #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
            #expect(try leftovers(in: directory) == ["download.bin", "source.bin"])
        }
    }

    @Test(arguments: TransportKind.allCases)
    func uploadOf50MiBFileIsEchoedBack(kind: TransportKind) async throws {
        try await withDirectory { directory in
            let source = try TransferServer.makeFile(in: directory, megabytes: 50)
            let last = Mutex<TransferProgress?>(nil)
            try await withTransferServer(kind, serving: source) { client, _ in
                let (echoed, head) = try await client.upload(TestEndpoint("upload", .put), from: source) { progress in
                    last.withLock { $0 = progress }
                }
                #expect(head.statusCode == 200)
                #expect(echoed == (try Data(contentsOf: source)))
                #expect(head.value(forHTTPHeaderField: "X-Content-Type") == "application/octet-stream")
            }
            #expect(last.withLock { $0 } == TransferProgress(completedBytes: 50 << 20, expectedBytes: 50 << 20))
        }
    }

    @Test(arguments: TransportKind.allCases)
    func uploadOfDataSendsIt(kind: TransportKind) async throws {
        try await withTransferServer(kind) { client, _ in
            let (echoed, _) = try await client.upload(TestEndpoint("upload", .post), from: Data("hello".utf8))
            #expect(echoed == Data("hello".utf8))
        }
    }

    @Test(arguments: TransportKind.allCases)
    func uploadOfAMissingFileFailsWithoutSending(kind: TransportKind) async throws {
        try await withTransferServer(kind) { client, server in
            let missing = URL(fileURLWithPath: "/nonexistent/leash-\(UUID()).bin")
            let error = await #expect(throws: LeashError.self) {
                try await client.upload(TestEndpoint("upload", .put), from: missing)
            }
            guard case .transport(let failure as TransferFailure) = error else {
                Issue.record("expected a TransferFailure, got \(String(describing: error))")
                return
            }
            #expect(failure.description.contains(missing.path))
            #expect(server.requests.withLock { $0 } == 0)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func streamedChunksArriveInOrderAsTheyAreSent(kind: TransportKind) async throws {
        try await withTransferServer(kind) { client, transfers in
            var lines: [String] = []
            var arrivals: [ContinuousClock.Instant] = []
            for try await line in client.stream(TestEndpoint("chunks/100/10")).lines {
                lines.append(line)
                arrivals.append(.now)
            }
            #expect(lines == (0..<100).map { "chunk \($0)" })
            // The server wrote a line every 10 ms (its clock is this process's). Each line is read
            // after it was written, and the first was in hand before the last was written:
            // delivered as they arrive, not gathered until the end.
            let sent = transfers.sentAt.withLock { $0 }
            #expect(sent.count == 100)
            #expect(zip(sent, arrivals).allSatisfy { $0 <= $1 })
            #expect(arrivals[0] < sent[99])
            let latencies = zip(sent, arrivals).map { $1 - $0 }.sorted()
            print(
                "stream timing (\(kind)): lines written over \(sent[99] - sent[0]), read over "
                    + "\(arrivals[99] - arrivals[0]); first read \(arrivals[0] - sent[0]) after writing, "
                    + "latency median \(latencies[50]), max \(latencies[99])")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func stoppingTheStreamEarlyCancelsTheRequest(kind: TransportKind) async throws {
        try await withTransferServer(kind) { client, transfers in
            var count = 0
            for try await _ in client.stream(TestEndpoint("chunks/1000/10")).lines {
                count += 1
                if count == 3 { break }
            }
            #expect(count == 3)
            // The server's next writes fail once the client has closed the connection.
            try await withWatchdog(seconds: 5) {
                while !transfers.writeFailed.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func streamOfAnErrorStatusThrowsIt(kind: TransportKind) async throws {
        try await withTransferServer(kind) { client, _ in
            let error = await #expect(throws: LeashError.self) {
                for try await _ in client.stream(TestEndpoint("status/503")) {}
            }
            guard case .unacceptableStatusCode(503, _, _) = error else {
                Issue.record("expected a 503, got \(String(describing: error))")
                return
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func cancellingMidDownloadLeavesNoFile(kind: TransportKind) async throws {
        try await withDirectory { directory in
            let destination = directory.appendingPathComponent("download.bin")
            let started = Mutex(false)
            try await withTransferServer(kind) { client, _ in
                let task = Task {
                    try await client.download(TestEndpoint("chunks/1000/10"), to: destination) { progress in
                        if progress.completedBytes > 0 { started.withLock { $0 = true } }
                    }
                }
                try await withWatchdog(seconds: 10) {
                    while !started.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
                }
                task.cancel()
                let result = await task.result
                #expect(throws: CancellationError.self) { try result.get() }
            }
            #expect(!FileManager.default.fileExists(atPath: destination.path))
            #expect(try leftovers(in: directory) == [])
        }
    }

    @Test(arguments: TransportKind.allCases)
    func downloadOfAnErrorStatusThrowsAndWritesNothing(kind: TransportKind) async throws {
        try await withDirectory { directory in
            let destination = directory.appendingPathComponent("download.bin")
            try await withTransferServer(kind) { client, _ in
                let error = await #expect(throws: LeashError.self) {
                    try await client.download(TestEndpoint("status/404"), to: destination)
                }
                guard case .unacceptableStatusCode(404, _, let data) = error else {
                    Issue.record("expected a 404, got \(String(describing: error))")
                    return
                }
                #expect(String(decoding: data, as: UTF8.self) == #"{"status":404}"#)
            }
            #expect(try leftovers(in: directory) == [])
        }
    }

    @Test(arguments: TransportKind.allCases)
    func downloadCutOffMidBodyIsRetriedByRetryInterceptor(kind: TransportKind) async throws {
        try await withDirectory { directory in
            let source = try TransferServer.makeFile(in: directory, megabytes: 4)
            let destination = directory.appendingPathComponent("download.bin")
            let recorder = Recorder()
            let interceptors: [any Interceptor] = [
                Probe(name: "probe", recorder: recorder),
                RetryInterceptor(maxAttempts: 3, baseDelay: .milliseconds(10)),
            ]
            try await withTransferServer(kind, serving: source, interceptors: interceptors) { client, transfers in
                try await client.download(TestEndpoint("flaky"), to: destination)
                #expect(transfers.flakyRequests.withLock { $0 } == 2)
            }
            #expect(try await sha256(of: destination) == (try await sha256(of: source)))
            #expect(
                recorder.events == [
                    "probe.execution", "probe.failure", "probe.execution", "probe.success", "probe.completion",
                ])
            #expect(try leftovers(in: directory) == ["download.bin", "source.bin"])
        }
    }

    @Test(arguments: TransportKind.allCases)
    func dataFromAFailureInterceptorReplacesACutOffDownload(kind: TransportKind) async throws {
        try await withDirectory { directory in
            let source = try TransferServer.makeFile(in: directory, megabytes: 4)
            let destination = directory.appendingPathComponent("download.bin")
            let fallback = Probe(
                name: "fallback", recorder: Recorder(),
                onFailure: { chain, _ in chain.complete(with: Data("fallback".utf8)) })
            try await withTransferServer(kind, serving: source, interceptors: [fallback]) { client, _ in
                try await client.download(TestEndpoint("flaky"), to: destination)
            }
            // The interceptor's data, not the half-written file.
            #expect(try Data(contentsOf: destination) == Data("fallback".utf8))
            #expect(try leftovers(in: directory) == ["download.bin", "source.bin"])
        }
    }

    @Test func dataFromASuccessInterceptorIsWhatTheDownloadWrites() async throws {
        try await withDirectory { directory in
            let stub = StubTransport()
            stub.stub(.get, "report", StubResponse(body: Data("from the network".utf8)))
            let replace = Probe(
                name: "replace", recorder: Recorder(),
                onSuccess: { chain, _ in chain.complete(with: Data("from an interceptor".utf8)) })
            let client = Client(manager: try makeManager(stub, interceptors: [replace]))
            let destination = directory.appendingPathComponent("report.txt")
            try await client.download(TestEndpoint("report"), to: destination)
            #expect(try Data(contentsOf: destination) == Data("from an interceptor".utf8))
            #expect(try leftovers(in: directory) == ["report.txt"])
        }
    }

    @Test func linesAreSplitAcrossChunksWithEitherLineEnding() async throws {
        let body = "one\r\ntwo\n\nthree\r\n" + String(repeating: "x", count: 100_000) + "\nlast"
        let transport = ChunkingTransport(body: Data(body.utf8), chunkSize: 7)
        let chunked = Client(manager: try Manager.Builder().url("https://api.example.com").transport(transport).build())
        var lines: [String] = []
        for try await line in chunked.stream(TestEndpoint("feed")).lines { lines.append(line) }
        #expect(lines == ["one", "two", "", "three", String(repeating: "x", count: 100_000), "last"])
    }

    @Test func transfersThroughStubTransportUseTheWholeBody() async throws {
        try await withDirectory { directory in
            let stub = StubTransport()
            stub.stub(.get, "report", StubResponse(body: Data("report".utf8)))
            stub.stub(.put, "upload", StubResponse(body: Data("stored".utf8)))
            let client = Client(manager: try makeManager(stub))
            let destination = directory.appendingPathComponent("report.txt")
            try Data("old".utf8).write(to: destination)
            try await client.download(TestEndpoint("report"), to: destination)
            #expect(try Data(contentsOf: destination) == Data("report".utf8))
            #expect(try leftovers(in: directory) == ["report.txt"])
            let (answer, _) = try await client.upload(TestEndpoint("upload", .put), from: Data("x".utf8))
            #expect(answer == Data("stored".utf8))
            var chunks: [Data] = []
            for try await chunk in client.stream(TestEndpoint("report")) { chunks.append(chunk) }
            #expect(chunks == [Data("report".utf8)])
        }
    }

    @Test func streamIsRestartedByRetryUntilTheFirstChunk() async throws {
        let stub = StubTransport()
        stub.stub(.get, "feed", .status(503), StubResponse(body: Data("ok\n".utf8)))
        let recorder = Recorder()
        let retry = RetryInterceptor(maxAttempts: 3, baseDelay: .milliseconds(1))
        let client = Client(
            manager: try makeManager(stub, interceptors: [Probe(name: "p", recorder: recorder), retry]))
        var lines: [String] = []
        for try await line in client.stream(TestEndpoint("feed")).lines { lines.append(line) }
        #expect(lines == ["ok"])
        #expect(stub.requests.count == 2)
        #expect(recorder.events == ["p.execution", "p.failure", "p.execution", "p.success", "p.completion"])
    }

    @Test(arguments: TransportKind.allCases)
    func streamCutOffAfterChunksEndsWithTheErrorAndIsNotRepeated(kind: TransportKind) async throws {
        let interceptors: [any Interceptor] = [RetryInterceptor(maxAttempts: 3, baseDelay: .milliseconds(1))]
        try await withTransferServer(kind, interceptors: interceptors) { client, transfers in
            var lines: [String] = []
            let error = await #expect(throws: LeashError.self) {
                for try await line in client.stream(TestEndpoint("cut/3")).lines { lines.append(line) }
            }
            #expect(error?.caseName == "transport")
            #expect(lines == ["chunk 0", "chunk 1", "chunk 2"])
            #expect(transfers.requests.withLock { $0 } == 1)
        }
    }

    @Test func cacheAndDeduplicationLetTransfersPass() async throws {
        try await withDirectory { directory in
            let stub = StubTransport()
            stub.stub(.get, "report", StubResponse(body: Data("report".utf8)))
            let cache = CacheInterceptor(policy: .timeToLive(.seconds(60)))
            let client = Client(manager: try makeManager(stub, interceptors: [cache, DeduplicationInterceptor()]))
            try await client.download(TestEndpoint("report"), to: directory.appendingPathComponent("a"))
            try await client.download(TestEndpoint("report"), to: directory.appendingPathComponent("b"))
            #expect(stub.requests.count == 2)
            #expect(try Data(contentsOf: directory.appendingPathComponent("b")) == Data("report".utf8))
        }
    }
}

/// What the transfer routes have seen.
/// Answers every request with `body`, handed over `chunkSize` bytes at a time.
private struct ChunkingTransport: Transport {
    let body: Data
    let chunkSize: Int

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        (body, head(for: request))
    }

    func open(
        _ request: URLRequest, body upload: UploadBody?, sent: @escaping @Sendable (TransferProgress) -> Void
    ) async throws -> (HTTPURLResponse, ResponseBody) {
        let offset = Mutex(0)
        let next: @Sendable () async throws -> Data? = { [body, chunkSize] in
            offset.withLock { offset in
                guard offset < body.count else { return nil }
                defer { offset += chunkSize }
                return body.subdata(in: offset..<min(offset + chunkSize, body.count))
            }
        }
        return (head(for: request), ResponseBody(next: next, cancel: { [body] in offset.withLock { $0 = body.count } }))
    }

    private func head(for request: URLRequest) -> HTTPURLResponse {
        HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])!
    }
}

private final class TransferServer: Sendable {
    let requests = Mutex(0)
    let flakyRequests = Mutex(0)
    let sentAt = Mutex<[ContinuousClock.Instant]>([])
    let writeFailed = Mutex(false)

    /// A file of random bytes, `source.bin` in `directory`.
    static func makeFile(in directory: URL, megabytes: Int) throws -> URL {
        let url = directory.appendingPathComponent("source.bin")
        let random = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/urandom"))
        defer { try? random.close() }
        let data = try random.read(upToCount: megabytes << 20) ?? Data()
        guard data.count == megabytes << 20 else { throw TransferFailure("/dev/urandom gave \(data.count) bytes") }
        try data.write(to: url)
        return url
    }
}

/// Starts a server with the transfer routes and a client for it through a transport of
/// `kind`, runs `body`, and shuts both down.
///
/// - `GET /file`: `file` in 256 KiB chunks, with `Content-Length`.
/// - `GET /flaky`: the first time, half of `file` and then the connection closes; afterwards all of it.
/// - `PUT|POST /upload`: the request body back; `X-Content-Type` echoes its `Content-Type`.
/// - `GET /chunks/<n>/<ms>`: `n` lines `chunk <i>`, chunked, one every `ms` milliseconds.
/// - `GET /cut/<n>`: `n` such lines, chunked, then the connection closes mid-body.
/// - `GET /status/<code>`: that status with `{"status":<code>}`.
private func withTransferServer(
    _ kind: TransportKind,
    serving file: URL? = nil,
    interceptors: [any Interceptor] = [],
    _ body: (Client, TransferServer) async throws -> Void
) async throws {
    let state = TransferServer()
    let contents = try file.map { try Data(contentsOf: $0) } ?? Data()
    let server = try await TestServer.start { request in
        state.requests.withLock { $0 += 1 }
        let segments = request.path.split(separator: "/").map(String.init)
        switch segments.first {
        case "file":
            return streaming(contents, upTo: contents.count, writeFailed: state.writeFailed)
        case "flaky":
            let first = state.flakyRequests.withLock { count in
                count += 1
                return count == 1
            }
            return streaming(
                contents, upTo: first ? contents.count / 2 : contents.count, writeFailed: state.writeFailed)
        case "upload":
            return TestResponse(
                status: 200, headers: [("X-Content-Type", request.header("Content-Type") ?? "")], body: request.body)
        case "cut":
            let count = Int(segments[1]) ?? 1
            return TestResponse(
                status: 200,
                action: .stream { writer in
                    for index in 0..<count { try await writer.write(Data("chunk \(index)\n".utf8)) }
                    try await Task.sleep(for: .milliseconds(50))
                    throw CancellationError()
                })
        case "chunks":
            let count = Int(segments[1]) ?? 1
            let gap = Int(segments[2]) ?? 0
            return TestResponse(
                status: 200, headers: [("Content-Type", "text/plain")],
                action: .stream { writer in
                    do {
                        for index in 0..<count {
                            state.sentAt.withLock { $0.append(.now) }
                            try await writer.write(Data("chunk \(index)\n".utf8))
                            try await Task.sleep(for: .milliseconds(gap))
                        }
                    } catch {
                        state.writeFailed.withLock { $0 = true }
                        throw error
                    }
                })
        default:
            let code = Int(segments.last ?? "") ?? 500
            return .json(#"{"status":\#(code)}"#, status: code)
        }
    }
    try await run(
        {
            try await withTransport(kind) { transport in
                let manager = try Manager.Builder().url(server.baseURL).transport(transport).interceptors(interceptors)
                    .build()
                try await body(Client(manager: manager), state)
            }
        }, thenAlways: { try await server.shutdown() })
}

/// Streams `contents` with its full `Content-Length`, closing the connection after `limit` bytes.
private func streaming(_ contents: Data, upTo limit: Int, writeFailed: Mutex<Bool>) -> TestResponse {
    TestResponse(
        status: 200, headers: [("Content-Length", "\(contents.count)")],
        action: .stream { writer in
            var offset = 0
            while offset < limit {
                let end = min(offset + 256 * 1024, limit)
                try await writer.write(contents[offset..<end])
                offset = end
            }
            if limit < contents.count { throw CancellationError() }
        })
}

/// The SHA-256 of a file, by `sha256sum`.
private func sha256(of file: URL) async throws -> String {
    try await offThePool { try sha256sum(file) }
}

private func sha256sum(_ file: URL) throws -> String {
    let process = Process()
    let output = Pipe()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["sha256sum", file.path]
    process.standardOutput = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return String(text.prefix { $0 != " " })
}

/// The names of the files in `directory`, hidden ones included, sorted.
private func leftovers(in directory: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
}
