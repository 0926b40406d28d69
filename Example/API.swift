import Foundation
import Leash

/// A user of the demo API.
struct User: Codable, Sendable {
    var id: Int
    var name: String
}

/// One enum per resource: the users of the demo API.
enum UsersEndpoint: Endpoint {
    case list(page: Int)
    case read(id: Int)
    case create(name: String)

    var path: String {
        switch self {
        case .list, .create: "users"
        case .read(let id): "users/\(id)"
        }
    }

    var method: HTTPMethod {
        switch self {
        case .list, .read: .get
        case .create: .post
        }
    }

    var parameters: Any? {
        switch self {
        case .list(let page): ["page": page]
        case .read: nil
        case .create(let name): ["name": name]
        }
    }
}

/// An endpoint that fails every other call, to show a retrying interceptor.
enum StatusEndpoint: Endpoint {
    case flaky

    var path: String { "flaky" }
    var method: HTTPMethod { .get }
}

struct Status: Codable, Sendable {
    var ok: Bool
}

/// The demo's credential.
struct DemoAuthenticator: Authenticator {
    static let header = "Authorization"
    var authentication: String? { "Bearer demo-token" }
}
