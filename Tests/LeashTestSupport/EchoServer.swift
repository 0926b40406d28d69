import Foundation
import LeashTestServer

@testable import Leash

/// What the echo routes send back: the request as the server saw it.
package struct Echo: Codable, Sendable {
    package var method: String
    package var path: String
    package var query: String?
    package var headers: [String: String]
    package var body: String
}

/// Starts a test server with the routes the integration tests use, runs `body`, and shuts the
/// server down.
///
/// - `/echo…`: the request as JSON (``Echo``).
/// - `/status/<code>`: that status, with a small JSON body unless bodiless.
/// - `/slow/<ms>`: waits, then answers `{}`.
/// - `/hang`: never answers.
/// - `/basic`: 401 with `WWW-Authenticate: Basic`.
/// - `/redirect`: 302 to `/echo?redirected=1`.
/// - `/away[/<code>]?to=<url>`: a redirect (302 unless given) to `url`.
package func withEchoServer<T>(_ body: (TestServer) async throws -> T) async throws -> T {
    let server = try await TestServer.start { request in
        let segments = request.path.split(separator: "/").map(String.init)
        switch segments.first {
        case "status":
            let code = Int(segments.last ?? "") ?? 500
            return code == 204 || code == 304 ? .status(code) : .json(#"{"status":\#(code)}"#, status: code)
        case "slow":
            let milliseconds = Int(segments.last ?? "") ?? 1000
            try? await Task.sleep(for: .milliseconds(milliseconds))
            return .json("{}")
        case "redirect":
            return .status(302, headers: [("Location", "/echo?redirected=1")])
        case "away":
            let target = request.queryItems.first { $0.name == "to" }?.value ?? "/echo"
            return .status(Int(segments.last ?? "") ?? 302, headers: [("Location", target)])
        case "hang":
            return TestResponse(action: .neverRespond)
        case "basic":
            return .json(
                #"{"error":"unauthorized"}"#, status: 401, headers: [("WWW-Authenticate", #"Basic realm="leash""#)])
        default:
            let echo = Echo(
                method: request.method,
                path: request.path,
                query: request.query,
                headers: request.headers,
                body: String(decoding: request.body, as: UTF8.self)
            )
            return .json(echo)
        }
    }
    return try await run({ try await body(server) }, thenAlways: { try await server.shutdown() })
}

/// Runs `body`, then `cleanup` whether `body` returned or threw.
package func run<T>(
    _ body: () async throws -> T,
    thenAlways cleanup: () async throws -> Void
) async throws -> T {
    let result: Result<T, any Error>
    do {
        result = .success(try await body())
    } catch {
        result = .failure(error)
    }
    try await cleanup()
    return try result.get()
}

/// Runs `body`, failing if it takes longer than `seconds`: a watchdog for calls that might hang.
/// Runs blocking `work` (a child process, hashing a large file) on a Dispatch thread, so the
/// Swift concurrency pool, two threads on a two-core machine, stays free for the tests that
/// run beside it: their timers and deliveries would otherwise wait seconds for a thread.
package func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}

package func withWatchdog<T: Sendable>(seconds: Double, _ body: @escaping @Sendable () async throws -> T) async throws
    -> T
{
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        let first = try await group.next()!
        group.cancelAll()
        guard let value = first else { throw WatchdogExpired(seconds: seconds) }
        return value
    }
}

package struct WatchdogExpired: Error, CustomStringConvertible {
    package let seconds: Double
    package var description: String { "the call did not end within \(seconds) s" }
}
