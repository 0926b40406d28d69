import Foundation

/// Turns the measurements into the markdown table of `Benchmarks/results/latest.md`.
struct Report {
    let clients: [String]
    let concurrencies: [Int]
    let trials: [String: [Trial]]
    let pipeline: [String: [Double]]
    let pipelineCalls: Int
    let rssSamples: [Double]
    let rawRSSSamples: [Double]
    let stubRSSSamples: [Double]
    let memoryCalls: Int
    let rounds: Int
    let callsPerTrial: Int

    private func f(_ value: Double, _ digits: Int = 0) -> String {
        String(format: "%.\(digits)f", value)
    }

    func markdown() -> String {
        let swiftVersion = ProcessInfo.processInfo.environment["LEASH_SWIFT_VERSION"] ?? "unknown"
        var lines = [
            "# Leash benchmarks",
            "",
            "- Date: \(ISO8601DateFormatter().string(from: Date()))",
            "- Machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, "
                + "\(f(Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824)) GiB, "
                + "\(ProcessInfo.processInfo.operatingSystemVersionString)",
            "- Swift: \(swiftVersion)",
            "- Method: server in a separate process on 127.0.0.1; clients interleaved in each round; "
                + "\(rounds) rounds of \(callsPerTrial) calls per client, scenario and concurrency; medians. "
                + "CPU is the client process's user + system time (getrusage) per request.",
            "",
            "## Network",
            "",
            "Ratios compare each client with the raw client of its transport (URLSession or AsyncHTTPClient).",
            "",
            "| scenario | in flight | client | req/s | p50 ms | p99 ms | CPU µs/req | RSS MiB | req/s vs raw | CPU vs raw |",
            "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for scenario in Scenario.allCases {
            for concurrency in concurrencies {
                // URLSession clients compare with raw URLSession, AsyncHTTPClient ones with raw AsyncHTTPClient.
                let rawURLSession = trials["\(clients[0])|\(scenario.rawValue)|\(concurrency)"] ?? []
                let rawAHC = trials["raw AsyncHTTPClient|\(scenario.rawValue)|\(concurrency)"] ?? []
                for client in clients {
                    let raw = client.contains("AsyncHTTPClient") ? rawAHC : rawURLSession
                    let rawRate = median(raw.map(\.requestsPerSecond))
                    let rawCPU = median(raw.map(\.cpuMicrosecondsPerRequest))
                    guard let runs = trials["\(client)|\(scenario.rawValue)|\(concurrency)"], !runs.isEmpty else {
                        continue
                    }
                    let rate = median(runs.map(\.requestsPerSecond))
                    let cpu = median(runs.map(\.cpuMicrosecondsPerRequest))
                    lines.append(
                        "| \(scenario.rawValue) | \(concurrency) | \(client) | \(f(rate)) | "
                            + "\(f(median(runs.map { $0.percentile(0.5) * 1000 }), 2)) | "
                            + "\(f(median(runs.map { $0.percentile(0.99) * 1000 }), 2)) | \(f(cpu)) | "
                            + "\(f(median(runs.map(\.rssMiB)), 1)) | \(f(rate / rawRate, 3)) | \(f(cpu / rawCPU, 3)) |")
                }
            }
        }
        let baseline = median(pipeline["baseline"] ?? [0])
        lines += [
            "",
            "## Pipeline (StubTransport, no network, \(pipelineCalls) sequential calls)",
            "",
            "An Execution-only pass-through interceptor runs once per call; an all-phase one conforms to all "
                + "five phases and runs four times per call (Execution, Success, Completion, Serialization).",
            "",
            "| client | µs per call | calls/s | µs beyond baseline |",
            "|---|---:|---:|---:|",
            "| hand-written baseline (same request, same decode) | \(f(baseline, 2)) | \(f(1e6 / baseline)) | — |",
        ]
        for (key, label) in [
            ("0", "Leash, no interceptors"),
            ("5e", "Leash, 5 Execution-only pass-through interceptors"),
            ("20e", "Leash, 20 Execution-only pass-through interceptors"),
            ("5", "Leash, 5 all-phase pass-through interceptors"),
            ("20", "Leash, 20 all-phase pass-through interceptors"),
        ] {
            let value = median(pipeline[key] ?? [0])
            lines.append("| \(label) | \(f(value, 2)) | \(f(1e6 / value)) | \(f(value - baseline, 2)) |")
        }
        let further = { (key: String) in
            (median(self.pipeline["20" + key] ?? [0]) - median(self.pipeline["5" + key] ?? [0])) / 15
        }
        lines += [
            "",
            "Each further interceptor (from 5 to 20): \(f(further("e"), 3)) µs in one phase, "
                + "\(f(further(""), 3)) µs in all phases.",
            "",
            "## Memory (\(memoryCalls) sequential calls, RSS sampled every \(memoryCalls / 10))",
            "",
            "In one process, one after the other: Leash with every phase over StubTransport (Leash's own "
                + "memory, no network), Leash with every phase over URLSession, and raw URLSession for reference.",
            "",
            "| calls | Leash over StubTransport | Leash over URLSession | raw URLSession |",
            "|---:|---:|---:|---:|",
        ]
        for (index, sample) in rssSamples.enumerated() {
            let raw = index < rawRSSSamples.count ? f(rawRSSSamples[index], 1) : "—"
            let stub = index < stubRSSSamples.count ? f(stubRSSSamples[index], 1) : "—"
            lines.append(
                "| \(index * memoryCalls / max(rssSamples.count - 1, 1)) | \(stub) | \(f(sample, 1)) | \(raw) |")
        }
        let growth = { (samples: [Double]) in (samples.last ?? 0) - (samples.dropFirst().first ?? 0) }
        lines += [
            "",
            "Growth from the sample after 10% of the calls to the last (MiB): Leash over StubTransport "
                + "\(f(growth(stubRSSSamples), 2)), Leash over URLSession \(f(growth(rssSamples), 2)), "
                + "raw URLSession \(f(growth(rawRSSSamples), 2)).",
            "",
        ]
        return lines.joined(separator: "\n")
    }
}
