import Foundation
import Leash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLRequest {
    /// The request as a `curl` command, with secrets replaced by `***`.
    ///
    /// ```swift
    /// print(try await client.urlRequest(for: UsersEndpoint.read(id: 7)).cURLDescription)
    /// // curl -X GET 'https://api.test/users/7' -H 'Authorization: ***'
    /// ```
    public var cURLDescription: String {
        cURLDescription(redactor: .default)
    }

    /// The request as a `curl` command, redacted with `redactor`.
    ///
    /// - Parameter redactor: What to hide.
    /// - Returns: The command, with every argument single-quoted for a POSIX shell.
    public func cURLDescription(redactor: Redactor) -> String {
        let secrets = redactor.secretValues(of: self)
        var parts = ["curl", "-X", httpMethod ?? "GET"]
        parts.append(Self.quoted(redactor.redact(url: url?.absoluteString ?? "")))
        let headers = redactor.redact(headers: allHTTPHeaderFields ?? [:])
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            parts.append("-H " + Self.quoted("\(name): \(value)"))
        }
        if let body = httpBody, !body.isEmpty {
            let text = String(data: body, encoding: .utf8).map { redactor.redact(text: $0, values: secrets) }
            parts.append("--data-binary " + Self.quoted(text ?? "<\(body.count) bytes of binary data>"))
        }
        return parts.joined(separator: " ")
    }

    private static func quoted(_ text: String) -> String {
        "'" + text.replacingScalars("'", with: "'\\''") + "'"
    }
}
