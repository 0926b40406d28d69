import Foundation
import Leash
import LeashAsyncHTTPClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One download of a large body to a file, with the process's RSS sampled while it runs.
struct DownloadMemory {
    let transport: String
    let bytes: Int64
    let seconds: Double
    let baselineMiB: Double
    let peakMiB: Double

    var growthMiB: Double { peakMiB - baselineMiB }
    var megabytesPerSecond: Double { Double(bytes) / 1_048_576 / seconds }

    /// Downloads `bytes` from the benchmark server's `/bytes/<n>` through `transport`, sampling
    /// RSS every 10 ms on a thread of its own.
    static func measure(transport name: String, _ transport: any Transport, base: String, bytes: Int64) async throws
        -> DownloadMemory
    {
        let manager = try Manager.Builder().url(base).transport(transport).build()
        let client = Client(manager: manager)
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("leash-bench-\(UUID()).bin")
        defer { try? FileManager.default.removeItem(at: destination) }
        // Warm up the client and the connection with a small download first.
        try await client.download(BenchEndpoint.bytes(1024), to: destination)
        let sampler = RSSSampler()
        let baseline = currentRSSMiB()
        sampler.start()
        let clock = ContinuousClock()
        let start = clock.now
        let head = try await client.download(BenchEndpoint.bytes(bytes), to: destination)
        let elapsed = clock.now - start
        let peak = sampler.stop()
        let size = (try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? NSNumber)?.int64Value
        guard head.statusCode == 200, size == bytes else {
            throw TransferFailure("download ended with status \(head.statusCode) and \(size ?? -1) bytes")
        }
        return DownloadMemory(
            transport: name, bytes: bytes, seconds: elapsed.seconds, baselineMiB: baseline, peakMiB: max(peak, baseline)
        )
    }
}

extension DownloadMemory {
    /// The reference: a plain URLSession download task, whose file URLSession itself writes.
    static func measureRawURLSession(base: String, bytes: Int64) async throws -> DownloadMemory {
        let delegate = RawDownloadDelegate()
        let session = URLSession(configuration: .default, delegate: delegate, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let url = URL(string: "\(base)/bytes/\(bytes)")!
        _ = try await delegate.run(session.downloadTask(with: URL(string: "\(base)/bytes/1024")!))
        let sampler = RSSSampler()
        let baseline = currentRSSMiB()
        sampler.start()
        let clock = ContinuousClock()
        let start = clock.now
        let size = try await delegate.run(session.downloadTask(with: url))
        let elapsed = clock.now - start
        let peak = sampler.stop()
        guard size == bytes else { throw TransferFailure("raw download wrote \(size) bytes") }
        return DownloadMemory(
            transport: "raw URLSession download task", bytes: bytes, seconds: elapsed.seconds, baselineMiB: baseline,
            peakMiB: max(peak, baseline))
    }
}

/// Runs one download task at a time and reports the size of the file URLSession wrote.
private final class RawDownloadDelegate: NSObject, URLSessionDownloadDelegate, @unchecked Sendable {
    // Safe: `continuation` and `size` are only touched while holding `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Int64, any Error>?
    private var size: Int64 = 0

    func run(_ task: URLSessionDownloadTask) async throws -> Int64 {
        try await withCheckedThrowingContinuation { continuation in
            lock.withLock { self.continuation = continuation }
            task.resume()
        }
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        let size = (try? FileManager.default.attributesOfItem(atPath: location.path)[.size] as? NSNumber)?.int64Value
        lock.withLock { self.size = size ?? -1 }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (continuation, size) = lock.withLock { () -> (CheckedContinuation<Int64, any Error>?, Int64) in
            defer { self.continuation = nil }
            return (self.continuation, self.size)
        }
        if let error { continuation?.resume(throwing: error) } else { continuation?.resume(returning: size) }
    }
}

/// Samples RSS every 10 ms on its own thread and keeps the largest value.
final class RSSSampler: @unchecked Sendable {
    // Safe: `running` and `peak` are only touched while holding `lock`.
    private let lock = NSLock()
    private var running = false
    private var peak = 0.0
    private let done = DispatchSemaphore(value: 0)

    func start() {
        lock.withLock { running = true }
        Thread.detachNewThread {
            while self.lock.withLock({ self.running }) {
                let rss = currentRSSMiB()
                self.lock.withLock { self.peak = max(self.peak, rss) }
                usleep(10_000)
            }
            self.done.signal()
        }
    }

    /// Stops sampling and returns the largest RSS seen, in MiB.
    func stop() -> Double {
        lock.withLock { running = false }
        done.wait()
        return lock.withLock { peak }
    }
}

extension DownloadMemory {
    /// The report section.
    static func markdown(_ runs: [DownloadMemory]) -> String {
        var lines = [
            "## Download memory", "",
            "A 1 GiB body downloaded to a file with `client.download(_:to:)`; RSS sampled every 10 ms "
                + "(target: growth under 32 MiB).", "",
            "| Transport | Bytes | Time (s) | MiB/s | RSS before (MiB) | RSS peak (MiB) | Growth (MiB) |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for run in runs {
            lines.append(
                "| \(run.transport) | \(run.bytes) | \(String(format: "%.2f", run.seconds)) | "
                    + "\(String(format: "%.0f", run.megabytesPerSecond)) | \(String(format: "%.1f", run.baselineMiB)) | "
                    + "\(String(format: "%.1f", run.peakMiB)) | \(String(format: "%.1f", run.growthMiB)) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
