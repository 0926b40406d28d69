import Foundation
import LeashTestServer

// The benchmark server: a separate process, so the harness measures the client's CPU alone.
// Prints "PORT <n>" once listening, then serves until it is terminated.
//
// - GET /small: about 100 bytes of JSON
// - GET /users: 100 users as JSON
// - POST /echo: the request body back
// - GET /bytes/<n>: n bytes in 256 KiB chunks, each flushed before the next is written

struct BenchUser: Codable {
    var id: Int
    var name: String
    var email: String
    var active: Bool
}

let small = Data(
    #"{"id":42,"name":"Ada Lovelace","email":"ada@example.com","active":true,"roles":["admin","dev"]}"#.utf8)
let users = try JSONEncoder().encode(
    (1...100).map { BenchUser(id: $0, name: "User \($0)", email: "user\($0)@example.com", active: $0 % 2 == 0) })

let chunk = Data(repeating: 0x2A, count: 256 * 1024)

let server = try await TestServer.start { request in
    if request.method == "GET", request.path.hasPrefix("/bytes/"), let total = Int(request.path.dropFirst(7)) {
        return TestResponse(
            status: 200, headers: [("Content-Length", "\(total)")],
            action: .stream { writer in
                var remaining = total
                while remaining > 0 {
                    let size = min(remaining, chunk.count)
                    try await writer.write(size == chunk.count ? chunk : chunk.prefix(size))
                    remaining -= size
                }
            })
    }
    return switch (request.method, request.path) {
    case ("GET", "/small"):
        TestResponse(status: 200, headers: [("Content-Type", "application/json")], body: small)
    case ("GET", "/users"):
        TestResponse(status: 200, headers: [("Content-Type", "application/json")], body: users)
    case ("POST", "/echo"):
        TestResponse(status: 200, headers: [("Content-Type", "application/json")], body: request.body)
    default:
        .status(404)
    }
}
// Exit when the harness goes away (its end of our standard input closes), so that no server
// outlives a run that crashed or exited early.
Thread.detachNewThread {
    while !FileHandle.standardInput.availableData.isEmpty {}
    exit(0)
}

// Written unbuffered, so the harness sees it at once.
FileHandle.standardOutput.write(Data("PORT \(server.port)\n".utf8))
while true {
    try await Task.sleep(for: .seconds(3600))
}
