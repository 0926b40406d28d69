import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One trial's numbers.
struct Trial {
    var requests: Int
    var seconds: Double
    var latencies: [Double]  // seconds, sorted
    var cpuSeconds: Double
    var rssMiB: Double

    var requestsPerSecond: Double { Double(requests) / seconds }
    var cpuMicrosecondsPerRequest: Double { cpuSeconds / Double(requests) * 1e6 }
    func percentile(_ p: Double) -> Double {
        latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
    }
}

#if os(Linux)
    private let rusageSelf = RUSAGE_SELF.rawValue
#else
    private let rusageSelf = RUSAGE_SELF
#endif

/// User plus system CPU time of this process, in seconds.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(rusageSelf, &usage)
    let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
    let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return user + system
}

/// The peak resident set size of this process so far, in MiB.
func peakRSSMiB() -> Double {
    var usage = rusage()
    getrusage(rusageSelf, &usage)
    #if os(Linux)
        return Double(usage.ru_maxrss) / 1024
    #else
        return Double(usage.ru_maxrss) / 1024 / 1024
    #endif
}

/// The current resident set size, in MiB (from /proc on Linux; the peak elsewhere).
func currentRSSMiB() -> Double {
    #if os(Linux)
        if let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let pages = statm.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
        {
            return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1024 / 1024
        }
    #endif
    return peakRSSMiB()
}

/// Hands out request numbers to the workers of a trial.
final class Ticket: @unchecked Sendable {
    // Safe: `next` is only touched while holding `lock`.
    private let lock = NSLock()
    private var next = 0
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    func take() -> Bool {
        lock.withLock {
            guard next < limit else { return false }
            next += 1
            return true
        }
    }
}

/// Runs `count` calls with `concurrency` in flight and measures them.
func measure(_ client: any BenchClient, _ scenario: Scenario, concurrency: Int, count: Int) async throws -> Trial {
    // Warm up connections and caches.
    for _ in 0..<min(50, count) { try await client.call(scenario) }
    let ticket = Ticket(limit: count)
    let cpuBefore = processCPUSeconds()
    let started = ContinuousClock.now
    let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
        for _ in 0..<concurrency {
            group.addTask {
                var mine: [Double] = []
                while ticket.take() {
                    let start = ContinuousClock.now
                    try await client.call(scenario)
                    mine.append((ContinuousClock.now - start).seconds)
                }
                return mine
            }
        }
        var all: [Double] = []
        for try await part in group { all += part }
        return all.sorted()
    }
    let seconds = (ContinuousClock.now - started).seconds
    return Trial(
        requests: count, seconds: seconds, latencies: latencies, cpuSeconds: processCPUSeconds() - cpuBefore,
        rssMiB: currentRSSMiB())
}

extension Duration {
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}
