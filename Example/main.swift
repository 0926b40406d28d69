import Foundation
import Leash
import LeashTestServer

// The Leash tour: start a demo API on 127.0.0.1 (or use --base-url), then call it through a
// Manager with an authenticator and interceptors, printing what happens. Exits non-zero when
// any step fails, so it doubles as an end-to-end check.

let arguments = CommandLine.arguments
var server: TestServer?
let baseURL: String
if let index = arguments.firstIndex(of: "--base-url"), index + 1 < arguments.count {
    baseURL = arguments[index + 1]
    print("Using the API at \(baseURL)")
} else {
    let demo = try await DemoServer.start()
    server = demo
    baseURL = demo.baseURL + "/api"
    print("Demo API listening on \(demo.baseURL)")
}

let manager = try Manager.Builder()
    .url(baseURL)
    .authenticator(DemoAuthenticator())
    .header("User-Agent", "LeashExample/0.1")
    .add(interceptor: TraceInterceptor())
    .add(interceptor: RetryOn503())
    .timeout(10)
    .build()
let client = Client(manager: manager)

var failures = 0

/// Runs one step of the tour and counts it as failed when it throws.
@MainActor func step(_ title: String, _ body: () async throws -> String) async {
    print("\n▸ \(title)")
    do {
        print("  ✓ " + (try await body()))
    } catch {
        failures += 1
        print("  ✗ \(error)")
    }
}

await step("List the first page of users") {
    let users: [User] = try await client.execute(UsersEndpoint.list(page: 1))
    return "\(users.count) users: " + users.prefix(3).map(\.name).joined(separator: ", ") + ", …"
}

await step("Read one user") {
    let user = try await client.execute(UsersEndpoint.read(id: 7), as: User.self)
    return "user #\(user.id) is \(user.name)"
}

await step("Create a user (JSON body)") {
    let user = try await client.execute(UsersEndpoint.create(name: "Ada Lovelace"), as: User.self)
    return "created user #\(user.id), \(user.name)"
}

await step("A missing user is a clear error") {
    let response = await client.response(UsersEndpoint.read(id: 999), as: User.self)
    guard case LeashError.unacceptableStatusCode(404, _, _)? = response.error else {
        throw LeashError.invalidConfiguration("expected a 404, got \(String(describing: response.error))")
    }
    return "404 arrived as LeashError.unacceptableStatusCode"
}

await step("A flaky endpoint, retried by an interceptor") {
    let status = try await client.execute(StatusEndpoint.flaky, as: Status.self)
    return "ok = \(status.ok) after a retry"
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
print(failures == 0 ? "\nTour complete: every step passed." : "\nTour finished with \(failures) failed step(s).")
exit(failures == 0 ? 0 : 1)
