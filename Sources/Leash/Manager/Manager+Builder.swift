import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Manager {
    /// Assembles a ``Manager``.
    ///
    /// Each method changes the builder and returns it, so calls chain, and a method called on
    /// its own (`builder.header("X-Id", id)`) works too.
    ///
    /// ```swift
    /// let manager = try Manager.Builder()
    ///     .scheme("http").host("127.0.0.1").port(8080).path("api")
    ///     .header("User-Agent", "MyApp/1.0")
    ///     .timeout(30)
    ///     .jsonDecoder { $0.dateDecodingStrategy = .iso8601 }
    ///     .build()
    /// ```
    public final class Builder {
        var scheme: String? = "https"
        var host: String?
        var port: Int?
        var path = ""
        var invalidURL: String?
        var headers: [String: String] = [:]
        var authenticator: (any Authenticator)?
        var interceptors: [any Interceptor] = []
        var timeout: TimeInterval = 60
        var jsonEncoderConfiguration: ((JSONEncoder) -> Void)?
        var jsonDecoderConfiguration: ((JSONDecoder) -> Void)?
        var acceptableStatusCodes: Range<Int>? = 200..<300
        var maxRetries = 5
        var transport: (any Transport)?

        /// Creates a builder with the defaults: `https`, no host, a 60-second timeout,
        /// statuses 200..<300 acceptable, 5 retries, and a ``URLSessionTransport``.
        public init() {}

        /// Sets the scheme, `http` or `https`.
        ///
        /// - Parameter scheme: The scheme.
        /// - Returns: The builder.
        @discardableResult
        public func scheme(_ scheme: String) -> Builder {
            self.scheme = scheme
            return self
        }

        /// Sets the host, such as `api.example.com` or `127.0.0.1`.
        ///
        /// - Parameter host: The host.
        /// - Returns: The builder.
        @discardableResult
        public func host(_ host: String) -> Builder {
            self.host = host
            return self
        }

        /// Sets the port; without one the scheme's default is used.
        ///
        /// - Parameter port: The port.
        /// - Returns: The builder.
        @discardableResult
        public func port(_ port: Int) -> Builder {
            self.port = port
            return self
        }

        /// Sets the base path every endpoint path is appended to, such as `api/v1`.
        ///
        /// - Parameter path: The path; a leading `/` is optional.
        /// - Returns: The builder.
        @discardableResult
        public func path(_ path: String) -> Builder {
            self.path = path
            return self
        }

        /// Sets scheme, host, port and path from one URL, such as `http://127.0.0.1:8080/api`.
        ///
        /// A URL that cannot be parsed makes ``build()`` throw ``LeashError/invalidURL(_:)``.
        ///
        /// - Parameter url: The base URL.
        /// - Returns: The builder.
        @discardableResult
        public func url(_ url: String) -> Builder {
            guard let components = URLComponents(string: url), components.query == nil, components.fragment == nil
            else {
                invalidURL = url
                return self
            }
            invalidURL = nil
            scheme = components.scheme
            host = components.host
            port = components.port
            path = components.percentEncodedPath
            return self
        }

        /// Sets scheme, host, port and path from one URL.
        ///
        /// - Parameter url: The base URL.
        /// - Returns: The builder.
        @discardableResult
        public func url(_ url: URL) -> Builder {
            self.url(url.absoluteString)
        }

        /// Sets what supplies the credential header of every request.
        ///
        /// - Parameter authenticator: The authenticator, read anew for every attempt.
        /// - Returns: The builder.
        @discardableResult
        public func authenticator(_ authenticator: (any Authenticator)?) -> Builder {
            self.authenticator = authenticator
            return self
        }

        /// Appends an interceptor to every phase it conforms to.
        ///
        /// - Parameter interceptor: The interceptor; it runs after those added before it.
        /// - Returns: The builder.
        @discardableResult
        public func add(interceptor: any Interceptor) -> Builder {
            interceptors.append(interceptor)
            return self
        }

        /// Replaces all interceptors.
        ///
        /// - Parameter interceptors: The interceptors, in the order they run.
        /// - Returns: The builder.
        @discardableResult
        public func interceptors(_ interceptors: [any Interceptor]) -> Builder {
            self.interceptors = interceptors
            return self
        }

        /// Sets a header sent with every request; endpoint headers override it.
        ///
        /// - Parameters:
        ///   - name: The header name.
        ///   - value: The value; `nil` removes the header.
        /// - Returns: The builder.
        @discardableResult
        public func header(_ name: String, _ value: String?) -> Builder {
            headers[name] = value
            return self
        }

        /// Sets the timeout of one attempt.
        ///
        /// - Parameter seconds: The timeout in seconds; it must be finite and above zero.
        /// - Returns: The builder.
        @discardableResult
        public func timeout(_ seconds: TimeInterval) -> Builder {
            timeout = seconds
            return self
        }

        /// Configures the `JSONEncoder` used for `Encodable` bodies.
        ///
        /// - Parameter configure: Called once with the new encoder.
        /// - Returns: The builder.
        @discardableResult
        public func jsonEncoder(_ configure: @escaping (JSONEncoder) -> Void) -> Builder {
            jsonEncoderConfiguration = configure
            return self
        }

        /// Configures the `JSONDecoder` used by typed calls.
        ///
        /// - Parameter configure: Called once with the new decoder.
        /// - Returns: The builder.
        @discardableResult
        public func jsonDecoder(_ configure: @escaping (JSONDecoder) -> Void) -> Builder {
            jsonDecoderConfiguration = configure
            return self
        }

        /// Sets which statuses go to the Success phase; `nil` turns validation off.
        ///
        /// - Parameter codes: The acceptable statuses, `200..<300` by default.
        /// - Returns: The builder.
        @discardableResult
        public func acceptableStatusCodes(_ codes: Range<Int>?) -> Builder {
            acceptableStatusCodes = codes
            return self
        }

        /// Sets how many times interceptors may retry one call.
        ///
        /// - Parameter count: The bound, 5 by default; zero or more.
        /// - Returns: The builder.
        @discardableResult
        public func maxRetries(_ count: Int) -> Builder {
            maxRetries = count
            return self
        }

        /// Sets what sends the requests.
        ///
        /// - Parameter transport: The transport; ``URLSessionTransport`` by default.
        /// - Returns: The builder.
        @discardableResult
        public func transport(_ transport: any Transport) -> Builder {
            self.transport = transport
            return self
        }

        /// Builds the manager.
        ///
        /// - Returns: The manager.
        /// - Throws: ``LeashError/invalidURL(_:)`` when the base URL is not an absolute `http`
        ///   or `https` URL with a host; ``LeashError/invalidConfiguration(_:)`` for a timeout
        ///   that is not above zero or a negative `maxRetries`.
        public func build() throws -> Manager {
            if let invalidURL { throw LeashError.invalidURL(invalidURL) }
            let trimmedPath = path.hasPrefix("/") ? String(path.dropFirst()) : path
            var hostText = host ?? ""
            if hostText.contains(":"), !hostText.hasPrefix("[") { hostText = "[\(hostText)]" }
            let portText = port.map { ":\($0)" } ?? ""
            let text = "\(scheme ?? "")://\(hostText)\(portText)" + (trimmedPath.isEmpty ? "" : "/" + trimmedPath)
            // Parse rather than assign URLComponents' percent-encoded setters, which trap on bad input.
            guard let scheme = scheme?.lowercased(), scheme == "http" || scheme == "https",
                let url = URL(string: text), let parsedHost = url.host, !parsedHost.isEmpty,
                url.query == nil, url.fragment == nil
            else {
                throw LeashError.invalidURL(text)
            }
            guard timeout.isFinite, timeout > 0 else {
                throw LeashError.invalidConfiguration("timeout must be a number of seconds above zero, not \(timeout)")
            }
            guard maxRetries >= 0 else {
                throw LeashError.invalidConfiguration("maxRetries must be zero or more, not \(maxRetries)")
            }
            if let header = headers.first(where: { !HeaderField.isValid(name: $0.key, value: $0.value) }) {
                throw LeashError.invalidConfiguration("the header '\(header.key)' holds a line break or is not a token")
            }
            return Manager(builder: self, baseURL: url)
        }
    }
}
