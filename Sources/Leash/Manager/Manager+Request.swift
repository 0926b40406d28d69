import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Manager {
    /// The base URL and method alone: what interceptors see when the request cannot be built.
    func partialRequest(for endpoint: any Endpoint) -> URLRequest {
        var request = URLRequest(url: baseURL, timeoutInterval: timeout)
        request.httpMethod = endpoint.method.rawValue
        return request
    }

    /// Builds the request for `endpoint`: URL, parameters, headers and authenticator.
    ///
    /// - Throws: ``LeashError/invalidURL(_:)`` or ``LeashError/encoding(_:)``.
    func request(for endpoint: any Endpoint) async throws -> URLRequest {
        let method = endpoint.method
        let encoded: EncodedParameters
        do {
            encoded = try EncodedParameters(endpoint.parameters, method: method, encoder: jsonEncoder)
        } catch let error as LeashError {
            throw error
        } catch {
            throw LeashError.encoding(error)
        }

        var request = URLRequest(url: try url(for: endpoint.path, query: encoded.query), timeoutInterval: timeout)
        // A new request's method is already GET; setting it costs a copy of the request's storage.
        if method != .get { request.httpMethod = method.rawValue }
        for (name, value) in headers {
            request.setValue(value, forHTTPHeaderField: name)
        }
        for (name, value) in endpoint.headers {
            try setHeader(value, named: name, on: &request)
        }
        if let authenticator, let value = await authenticator.authentication {
            try setHeader(value, named: type(of: authenticator).header, on: &request)
        }
        if let body = encoded.body {
            request.httpBody = body
            if let contentType = encoded.contentType, request.value(forHTTPHeaderField: "Content-Type") == nil {
                request.setValue(contentType, forHTTPHeaderField: "Content-Type")
            }
        }
        return request
    }

    private func setHeader(_ value: String, named name: String, on request: inout URLRequest) throws {
        guard HeaderField.isValid(name: name, value: value) else {
            throw LeashError.encoding(HeaderError(name: name))
        }
        request.setValue(value, forHTTPHeaderField: name)
    }

    /// Joins the base URL and `path` as text, then appends the encoded query.
    ///
    /// This runs on every call, so it scans bytes rather than calling Foundation's string search.
    private func url(for path: String, query: String?) throws -> URL {
        var path = Substring(path)
        if path.utf8.first == UInt8(ascii: "/") { path = path.dropFirst() }
        guard !path.utf8.contains(UInt8(ascii: "#")) else {
            throw LeashError.invalidURL(baseURLString + "/" + path)
        }
        var text = baseURLString
        var pathQuery: Substring?
        if let questionMark = path.utf8.firstIndex(of: UInt8(ascii: "?")) {
            pathQuery = path[path.index(after: questionMark)...]
            path = path[..<questionMark]
        }
        if !path.isEmpty {
            text += "/"
            text += Self.escape(path, allowed: .leashPathAllowed, ascii: .path)
        }
        var separator = "?"
        if let pathQuery, !pathQuery.isEmpty {
            text += separator
            text += Self.escape(pathQuery, allowed: .leashQueryAllowed, ascii: .query)
            separator = "&"
        }
        if let query, !query.isEmpty {
            text += separator
            text += query
        }
        // The base URL was checked for a scheme and host when the manager was built, and the
        // path is appended after a `/`, so the host cannot change here.
        guard let url = URL(string: text) else {
            throw LeashError.invalidURL(text)
        }
        return url
    }

    private static func escape(_ text: Substring, allowed: CharacterSet, ascii: ASCIIAllowed) -> String {
        // Fast path: most paths are plain ASCII that needs no escaping.
        if text.utf8.allSatisfy({ ascii.contains($0) }) { return String(text) }
        return String(text).addingPercentEncoding(withAllowedCharacters: allowed) ?? String(text)
    }
}

/// The ASCII bytes of a `CharacterSet`, as a table looked up without Foundation.
struct ASCIIAllowed {
    private let low: UInt64
    private let high: UInt64

    init(_ set: CharacterSet) {
        var low: UInt64 = 0
        var high: UInt64 = 0
        for byte in UInt8(0)..<128 where set.contains(Unicode.Scalar(byte)) {
            if byte < 64 { low |= 1 << byte } else { high |= 1 << (byte - 64) }
        }
        self.low = low
        self.high = high
    }

    func contains(_ byte: UInt8) -> Bool {
        byte < 64 ? low & (1 << byte) != 0 : byte < 128 && high & (1 << (byte - 64)) != 0
    }

    /// `CharacterSet.leashPathAllowed` as a table.
    static let path = ASCIIAllowed(.leashPathAllowed)
    /// `CharacterSet.leashQueryAllowed` as a table.
    static let query = ASCIIAllowed(.leashQueryAllowed)
}

extension CharacterSet {
    /// Path characters, plus `%` so that an already escaped path is left as it is.
    static let leashPathAllowed = CharacterSet.urlPathAllowed.union(["%"])
    /// Query characters, plus `%` so that an already escaped query is left as it is.
    static let leashQueryAllowed = CharacterSet.urlQueryAllowed.union(["%"])
}

/// A header name or value that cannot be sent.
struct HeaderError: Error, CustomStringConvertible {
    let name: String
    var description: String {
        "the header '\(name)' has a name that is not a token, or a value with a line break (header injection)"
    }
}

/// Where an endpoint's parameters go: the query string or the body.
struct EncodedParameters {
    var query: String?
    var body: Data?
    var contentType: String?

    init(_ parameters: Any?, method: HTTPMethod, encoder: JSONEncoder) throws {
        guard let parameters else { return }
        let inQuery = method.encodesParametersInQuery
        // The order of these cases is the documented matching order: first match wins.
        if let queryEncodable = parameters as? any QueryEncodable {
            query = try QueryString.encode(queryEncodable.toQuery())
        } else if let data = parameters as? Data {
            try Self.requireBody(inQuery, method, "Data")
            body = data
            contentType = "application/octet-stream"
        } else if let form = parameters as? MultipartFormData {
            try Self.requireBody(inQuery, method, "MultipartFormData")
            body = try form.encode()
            contentType = form.contentType
        } else if let dictionary = parameters as? [String: any CustomStringConvertible] {
            if inQuery {
                query = try QueryString.encode(dictionary)
            } else {
                try setJSONObject(dictionary)
            }
        } else if let encodable = parameters as? any Encodable {
            try Self.requireBody(inQuery, method, "\(type(of: encodable))")
            body = try encoder.encode(encodable)
            contentType = "application/json"
        } else if parameters is [String: Any] || parameters is [Any] {
            try Self.requireBody(inQuery, method, "\(type(of: parameters))")
            try setJSONObject(parameters)
        } else {
            throw EncodingProblem(
                "parameters of type \(type(of: parameters)) cannot be encoded: use QueryEncodable, Encodable, "
                    + "[String: Any], Data or MultipartFormData"
            )
        }
    }

    private mutating func setJSONObject(_ object: Any) throws {
        // JSONSerialization raises (crashes) on some platforms for objects it cannot write.
        guard JSONSerialization.isValidJSONObject(object) else {
            throw EncodingProblem(
                "the parameters are not a valid JSON object (only strings, numbers, booleans, arrays, dictionaries "
                    + "and NSNull, with finite numbers)"
            )
        }
        body = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        contentType = "application/json"
    }

    private static func requireBody(_ inQuery: Bool, _ method: HTTPMethod, _ type: String) throws {
        if inQuery {
            throw EncodingProblem(
                "a \(method.rawValue) request has no body, so \(type) parameters cannot be sent; use QueryEncodable "
                    + "or a [String: CustomStringConvertible] dictionary for the query"
            )
        }
    }
}

/// Why parameters or a multipart form could not be encoded, in words.
struct EncodingProblem: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
