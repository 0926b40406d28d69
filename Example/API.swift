import Foundation
import Leash

// The demo API, one enum per resource: the way we recommend describing an API.

struct User: Codable, Sendable {
    var id: Int
    var name: String
}

struct Credentials: Decodable, Sendable {
    var accessToken: String
    var refreshToken: String
}

struct Status: Decodable, Sendable {
    var ok: Bool
}

/// The error body the demo API sends with every 4xx and 5xx.
struct APIErrorBody: Decodable, Sendable {
    var error: String
}

/// An error the API explained in its body.
struct APIError: Error, CustomStringConvertible {
    var message: String
    var description: String { "the API says: \(message)" }
}

enum AuthEndpoint: Endpoint {
    case login(user: String, password: String)
    case refresh(refreshToken: String)

    var path: String {
        switch self {
        case .login: "auth/login"
        case .refresh: "auth/refresh"
        }
    }

    var method: HTTPMethod { .post }

    var parameters: Any? {
        switch self {
        case .login(let user, let password): ["user": user, "password": password]
        case .refresh(let refreshToken): ["refreshToken": refreshToken]
        }
    }
}

enum UsersEndpoint: Endpoint {
    case list(page: Int)
    case read(id: Int)
    case create(name: String)
    case export

    var path: String {
        switch self {
        case .list, .create: "users"
        case .read(let id): "users/\(id)"
        case .export: "users/export"
        }
    }

    var method: HTTPMethod {
        switch self {
        case .list, .read, .export: .get
        case .create: .post
        }
    }

    var parameters: Any? {
        switch self {
        case .list(let page): ["page": page]
        case .read, .export: nil
        case .create(let name): ["name": name]
        }
    }
}

enum StatusEndpoint: Endpoint {
    case flaky
    case slow

    var path: String {
        switch self {
        case .flaky: "status/flaky"
        case .slow: "status/slow"
        }
    }

    var method: HTTPMethod { .get }
}
