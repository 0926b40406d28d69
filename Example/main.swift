import Foundation
import Leash
import LeashInterceptors
import LeashLogging
import LeashTestServer

// The Leash tour: start a demo API on 127.0.0.1 (or use --base-url URL), then call it through
// a Manager with logging, retry, token refresh, a cache and validation, printing what happens.
// Exits non-zero when any step fails, so it doubles as an end-to-end check.

let arguments = CommandLine.arguments
var server: TestServer?
let baseURL: String
if let index = arguments.firstIndex(of: "--base-url"), index + 1 < arguments.count {
    baseURL = arguments[index + 1]
    print("Touring the API at \(baseURL)")
} else {
    let demo = try await DemoServer.start()
    server = demo
    baseURL = demo.baseURL + "/api"
    print("Demo API listening on \(demo.baseURL); its access tokens expire after 2 seconds.")
}

// Sign-in and refresh go through their own client: one without the refresh interceptor.
let logger = LoggerInterceptor(logger: ConsoleLogger(prefix: "    log  "), level: .minimal)
let authClient = Client(manager: try Manager.Builder().url(baseURL).add(interceptor: logger).build())
let refreshes = Tally()
let tokens = TokenAuthenticator(token: nil) { _ in
    print("    🔑   the access token expired: refreshing it (once, for every waiting call)")
    refreshes.add()
    return try await authClient.execute(AuthEndpoint.refresh(refreshToken: "refresh-ada"), as: Credentials.self)
        .accessToken
}
let retries = Tally()
let events = EventInterceptor { event in
    if case .retried(_, _, let attempt) = event {
        retries.add()
        print("    ↻    retrying: attempt \(attempt + 1)")
    }
}

let manager = try Manager.Builder()
    .url(baseURL)
    .authenticator(tokens)
    .header("User-Agent", "LeashTour/1.0")
    .timeout(10)
    .add(interceptor: events)
    .add(interceptor: logger)
    .add(interceptor: TokenRefreshInterceptor(authenticator: tokens))
    .add(interceptor: .retry(maxAttempts: 3, baseDelay: .milliseconds(200), maxDelay: .seconds(3)))
    .add(interceptor: BodyValidator<APIErrorBody> { APIError(message: $0.error) })
    .add(interceptor: CacheInterceptor(policy: .cacheAndRenew, paths: ["users"]))
    .build()
let client = Client(manager: manager)

var failures = 0

/// Runs one step of the tour; a thrown error fails the step and the tour.
@MainActor func step(_ title: String, _ body: () async throws -> String) async {
    print("\n▸ \(title)")
    do {
        print("  ✓ " + (try await body()))
    } catch {
        failures += 1
        print("  ✗ \(error)")
    }
}

/// What the tour expected and did not get.
struct Unexpected: Error, CustomStringConvertible {
    var description: String
}

await step("Sign in") {
    let credentials = try await authClient.execute(
        AuthEndpoint.login(user: "ada", password: "lovelace"), as: Credentials.self)
    await tokens.setToken(credentials.accessToken)
    return "signed in; the TokenAuthenticator now holds \(credentials.accessToken)"
}

/// Lists a page, printing every delivery: from the cache, then from the network.
func listPage(_ page: Int) async throws -> [String] {
    var deliveries: [String] = []
    for await delivery in client.responses(UsersEndpoint.list(page: page), as: [User].self) {
        let source = CacheInterceptor.isCached(delivery.extra) ? "cached" : "fresh"
        let users = try delivery.result.get()
        print("    📦   \(source) delivery: \(users.count) users, first \(users.first?.name ?? "none")")
        deliveries.append(source)
    }
    return deliveries
}

await step("List the first page of users") {
    let deliveries = try await listPage(1)
    guard deliveries == ["fresh"] else { throw Unexpected(description: "expected one fresh delivery: \(deliveries)") }
    return "one delivery, from the network"
}

await step("List it again: the cache answers first, then the network") {
    let deliveries = try await listPage(1)
    guard deliveries == ["cached", "fresh"] else {
        throw Unexpected(description: "expected cached then fresh: \(deliveries)")
    }
    return "two deliveries: cached, then fresh"
}

await step("The second page (query parameters)") {
    let users: [User] = try await client.execute(UsersEndpoint.list(page: 2))
    return "users \(users.first?.id ?? 0)–\(users.last?.id ?? 0)"
}

await step("Read one user") {
    let user = try await client.execute(UsersEndpoint.read(id: 7), as: User.self)
    return "user #\(user.id) is \(user.name)"
}

await step("Create a user (JSON body)") {
    let user = try await client.execute(UsersEndpoint.create(name: "Ada Lovelace"), as: User.self)
    return "created user #\(user.id), \(user.name)"
}

await step("A missing user: BodyValidator turns the error body into an error") {
    let response = await client.response(UsersEndpoint.read(id: 999), as: User.self)
    guard let error = response.error as? APIError else {
        throw Unexpected(description: "expected an APIError, got \(String(describing: response.error))")
    }
    return "failed as expected: \(error)"
}

await step("A flaky endpoint: 503 with Retry-After, retried by RetryInterceptor") {
    let before = retries.count
    let status = try await client.execute(StatusEndpoint.flaky, as: Status.self)
    guard retries.count > before else { throw Unexpected(description: "expected a retry") }
    return "ok = \(status.ok) after \(retries.count - before) retry"
}

await step("The token expires: five calls at once share one refresh") {
    print("    ⏳   waiting 2.5 s for the access token to expire")
    try await Task.sleep(for: .milliseconds(2500))
    let before = refreshes.count
    let names = try await withThrowingTaskGroup(of: String.self) { group in
        for id in 1...5 {
            group.addTask { try await client.execute(UsersEndpoint.read(id: id), as: User.self).name }
        }
        var names: [String] = []
        for try await name in group { names.append(name) }
        return names
    }
    guard refreshes.count - before == 1 else {
        throw Unexpected(description: "expected one refresh, saw \(refreshes.count - before)")
    }
    return "\(names.count) users read after exactly one refresh"
}

await step("A slow call, cancelled after 300 ms") {
    let call = Task { try await client.execute(StatusEndpoint.slow, as: Status.self) }
    try await Task.sleep(for: .milliseconds(300))
    call.cancel()
    do {
        _ = try await call.value
        throw Unexpected(description: "the call was not cancelled")
    } catch is CancellationError {
        return "ended with CancellationError, once"
    }
}

await step("The user export, streamed line by line, then downloaded to a file") {
    var streamed = 0
    for try await line in client.stream(UsersEndpoint.export).lines where !line.hasPrefix("id,") {
        streamed += 1
    }
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("leash-export-\(UUID()).csv")
    defer { try? FileManager.default.removeItem(at: file) }
    let lastProgress = Tally()
    try await client.download(UsersEndpoint.export, to: file) { progress in
        lastProgress.set(Int(progress.completedBytes))
    }
    let downloaded = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").count - 1
    guard streamed == downloaded, streamed > 0 else {
        throw Unexpected(description: "streamed \(streamed) users but downloaded \(downloaded)")
    }
    return "\(streamed) users streamed as they came; \(lastProgress.count) bytes downloaded, with progress"
}

await step("The completion-handler style of the original Leash") {
    let name = try await withCheckedThrowingContinuation { continuation in
        client.execute(UsersEndpoint.read(id: 3)) { (response: Response<User>) in
            continuation.resume(with: response.result.map(\.name))
        }
    }
    return "the handler received \(name)"
}

try await server?.shutdown()
if failures == 0 {
    print("\nTour complete: every step passed.")
} else {
    print("\nTour failed: \(failures) step(s) did not pass.")
}
exit(failures == 0 ? 0 : 1)
