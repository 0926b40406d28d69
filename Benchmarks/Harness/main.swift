import Foundation
import Leash
import LeashAsyncHTTPClient
import LeashLogging

// The Leash benchmark suite. Run it with `bash Benchmarks/run` (release build).
//
// 1. Network: a server in a separate process on 127.0.0.1; raw URLSession and Leash clients
//    interleaved (A B C A B C …) over several rounds; medians of req/s, latency and client CPU.
// 2. Pipeline: Leash over StubTransport with 0, 5 and 20 pass-through interceptors against a
//    hand-written baseline, in process.
// 3. Memory: 100,000 sequential calls through Leash, RSS sampled every 10,000.
// 4. Download memory: a 1 GiB download to a file through each transport, RSS sampled every 10 ms.
//
// Options: --quick (fewer calls, for a smoke run), --output PATH (default
// Benchmarks/results/latest.md), --pipeline-only [--pipeline-calls N] (part 2 alone),
// --transport-check (the raw clients, the transports alone and Leash side by side),
// --profile-client N (one client at 16 in flight, to run under perf), and --download-memory
// (part 4 alone).

let arguments = CommandLine.arguments
let quick = arguments.contains("--quick")
let pipelineOnly = arguments.contains("--pipeline-only")
let output =
    arguments.firstIndex(of: "--output").map { arguments[$0 + 1] } ?? "Benchmarks/results/latest.md"
let rounds = quick ? 1 : 3
let callsPerTrial = quick ? 300 : 2000
let pipelineCalls =
    arguments.firstIndex(of: "--pipeline-calls").flatMap { Int(arguments[$0 + 1]) } ?? (quick ? 20_000 : 200_000)
let memoryCalls = quick ? 10_000 : 100_000

func log(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

// MARK: 2. Pipeline (first when asked for alone)

if pipelineOnly {
    var results: [String: [Double]] = [:]
    for _ in 1...3 {
        results["baseline", default: []].append(try await PipelineBenchmark.baseline(calls: pipelineCalls))
        for count in [0, 5, 20] where count == 20 || !arguments.contains("--profile") {
            results["\(count)", default: []].append(
                try await PipelineBenchmark.leash(interceptors: count, calls: pipelineCalls))
            if count > 0 {
                results["\(count)e", default: []].append(
                    try await PipelineBenchmark.leash(interceptors: count, executionOnly: true, calls: pipelineCalls))
            }
        }
    }
    let medians = results.mapValues(median)
    if arguments.contains("--profile") { exit(0) }
    for name in ["baseline", "0", "5", "20", "5e", "20e"] {
        print("\(name): \(String(format: "%.2f", medians[name]!)) µs")
    }
    print("5 beyond baseline: \(String(format: "%.2f", medians["5"]! - medians["baseline"]!)) µs")
    print("minimums: \(results.mapValues { String(format: "%.2f", $0.min()!) })")
    print("each further: \(String(format: "%.3f", (medians["20"]! - medians["5"]!) / 15)) µs")
    print("5 Execution-only beyond baseline: \(String(format: "%.2f", medians["5e"]! - medians["baseline"]!)) µs")
    print("each further Execution-only: \(String(format: "%.3f", (medians["20e"]! - medians["5e"]!) / 15)) µs")
    exit(0)
}

// MARK: The server process

let serverURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    .appendingPathComponent("LeashBenchServer")
let server = Process()
server.executableURL = serverURL
let serverOutput = Pipe()
server.standardOutput = serverOutput
// The server exits when this pipe closes, which happens however this process ends.
server.standardInput = Pipe()
try server.run()
defer { server.terminate() }
var portLine = ""
while !portLine.hasSuffix("\n") {
    let byte = serverOutput.fileHandleForReading.readData(ofLength: 1)
    guard !byte.isEmpty else { break }
    portLine += String(decoding: byte, as: UTF8.self)
}
guard let port = Int(portLine.dropFirst("PORT ".count).trimmingCharacters(in: .whitespacesAndNewlines)) else {
    log("the benchmark server did not start: \(portLine)")
    exit(1)
}
let base = "http://127.0.0.1:\(port)"
log("server pid \(server.processIdentifier) on \(base)")

// MARK: 4. Download memory (first when asked for alone)

func downloadMemory() async throws -> [DownloadMemory] {
    let transport = try AsyncHTTPClientTransport()
    // AsyncHTTPClient first: memory URLSession leaves behind would hide growth in a later run.
    let runs = [
        try await DownloadMemory.measure(transport: "AsyncHTTPClientTransport", transport, base: base, bytes: 1 << 30),
        try await DownloadMemory.measure(
            transport: "URLSessionTransport", URLSessionTransport(), base: base, bytes: 1 << 30),
        try await DownloadMemory.measureRawURLSession(base: base, bytes: 1 << 30),
    ]
    try await transport.shutdown()
    for run in runs {
        log(
            "download \(run.transport): RSS \(run.baselineMiB) → \(run.peakMiB) MiB, \(Int(run.megabytesPerSecond)) MiB/s"
        )
    }
    return runs
}
if arguments.contains("--download-memory") {
    print(DownloadMemory.markdown(try await downloadMemory()))
    exit(0)
}

// MARK: 1. Network, interleaved

let ahcTransport = try AsyncHTTPClientTransport(configuration: .init(maximumConnectionsPerHost: 64))
var clients = try Clients.all(base: base) + Clients.asyncHTTPClient(base: base, transport: ahcTransport)
if let index = arguments.firstIndex(of: "--profile-client"), let which = Int(arguments[index + 1]) {
    // 0 raw URLSession, 1 Leash over URLSession, 3 raw AsyncHTTPClient, 4 AsyncHTTPClientTransport
    // alone, 5 Leash over AsyncHTTPClient, 6 URLSessionTransport alone.
    let client: any BenchClient =
        which == 6
        ? URLRequestClient.alone(URLSessionTransport(), name: "URLSessionTransport alone", base: base)
        : clients[which]
    let trial = try await measure(client, .small, concurrency: 16, count: 20000)
    print("\(client.name): \(Int(trial.requestsPerSecond)) req/s, \(Int(trial.cpuMicrosecondsPerRequest)) µs CPU")
    exit(0)
}
if arguments.contains("--transport-check") {
    let urlSessionAlone = URLRequestClient.alone(URLSessionTransport(), name: "URLSessionTransport alone", base: base)
    clients = [clients[0], urlSessionAlone, clients[1], clients[3], clients[4], clients[5]]
    for round in 1...3 {
        for concurrency in [1, 16] {
            for client in clients {
                let trial = try await measure(client, .small, concurrency: concurrency, count: 3000)
                print(
                    "round \(round) ×\(concurrency) \(client.name): \(Int(trial.requestsPerSecond)) req/s, "
                        + "\(Int(trial.cpuMicrosecondsPerRequest)) µs CPU")
            }
        }
    }
    exit(0)
}
let concurrencies = [1, 16, 64]
var trials: [String: [Trial]] = [:]
func key(_ client: String, _ scenario: Scenario, _ concurrency: Int) -> String {
    "\(client)|\(scenario.rawValue)|\(concurrency)"
}
for round in 1...rounds {
    for scenario in Scenario.allCases {
        for concurrency in concurrencies {
            for client in clients {
                let trial = try await measure(client, scenario, concurrency: concurrency, count: callsPerTrial)
                trials[key(client.name, scenario, concurrency), default: []].append(trial)
                log(
                    "round \(round) \(scenario.rawValue) ×\(concurrency) \(client.name): "
                        + "\(Int(trial.requestsPerSecond)) req/s, \(Int(trial.cpuMicrosecondsPerRequest)) µs CPU")
            }
        }
    }
}

// MARK: 2. Pipeline, interleaved

var pipeline: [String: [Double]] = [:]
for _ in 1...rounds {
    pipeline["baseline", default: []].append(try await PipelineBenchmark.baseline(calls: pipelineCalls))
    for count in [0, 5, 20] {
        pipeline["\(count)", default: []].append(
            try await PipelineBenchmark.leash(interceptors: count, calls: pipelineCalls))
        if count > 0 {
            pipeline["\(count)e", default: []].append(
                try await PipelineBenchmark.leash(interceptors: count, executionOnly: true, calls: pipelineCalls))
        }
    }
    log("pipeline round: \(pipeline.mapValues { $0.last! })")
}

// MARK: 3. Memory, Leash and raw URLSession for reference

func memoryRun(_ client: any BenchClient) async throws -> [Double] {
    var samples: [Double] = [currentRSSMiB()]
    for index in 1...memoryCalls {
        try await client.call(.small)
        if index % (memoryCalls / 10) == 0 {
            samples.append(currentRSSMiB())
            log("memory \(client.name): \(index) calls, RSS \(String(format: "%.1f", samples.last!)) MiB")
        }
    }
    return samples
}
let stubManager = try Manager.Builder().url("https://bench.test/v1").transport(PipelineBenchmark.transport())
    .authenticator(FixedToken()).add(interceptor: PassThrough()).add(interceptor: LoggerInterceptor(level: .none))
    .build()
let stubRSSSamples = try await memoryRun(LeashClient(name: "Leash over StubTransport", manager: stubManager))
let rssSamples = try await memoryRun(clients[2])
let rawRSSSamples = try await memoryRun(clients[0])
let downloads = try await downloadMemory()

// MARK: Report

let report = Report(
    clients: clients.map(\.name), concurrencies: concurrencies, trials: trials, pipeline: pipeline,
    pipelineCalls: pipelineCalls, rssSamples: rssSamples, rawRSSSamples: rawRSSSamples,
    stubRSSSamples: stubRSSSamples, memoryCalls: memoryCalls,
    rounds: rounds,
    callsPerTrial: callsPerTrial)
try await ahcTransport.shutdown()
let markdown = report.markdown() + "\n" + DownloadMemory.markdown(downloads)
try FileManager.default.createDirectory(
    at: URL(fileURLWithPath: output).deletingLastPathComponent(), withIntermediateDirectories: true)
try markdown.write(toFile: output, atomically: true, encoding: .utf8)
print(markdown)
log("written to \(output)")
