import Foundation
import Leash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Logs every attempt, with secrets redacted.
///
/// ```swift
/// let manager = try Manager.Builder().url(base)
///     .add(interceptor: LoggerInterceptor(level: .minimal))
///     .build()
/// // [Leash] GET https://api.test/users?page=1 → 200 in 12.3 ms (attempt 1)
/// ```
///
/// - ``Level/minimal`` writes one line per attempt — method, URL, status or error, duration
///   from `InterceptorChain.startedAt` and attempt number — retried attempts included.
/// - ``Level/verbose`` adds the request's and response's headers and bodies, bodies cut at
///   `bodyLimit` bytes.
///
/// Secrets are redacted everywhere it writes: secret headers (`Authorization`, `Cookie`, …),
/// secret query items (`token`, `api_key`, …), and in bodies the request's own secret values
/// wherever they appear, plus JSON members and `name=value` pairs with secret names. Errors
/// reach the logger as ``RedactedError`` (at ``Level/minimal``, not for a bare unacceptable
/// status, which the line already shows). Pass a `Redactor` to change what counts as secret.
public struct LoggerInterceptor: ExecutionInterceptor, SuccessInterceptor, FailureInterceptor,
    CompletionInterceptor
{
    /// How much is logged.
    public enum Level: Sendable, Comparable {
        /// Nothing.
        case none
        /// One line per attempt.
        case minimal
        /// Headers and bodies too.
        case verbose
    }

    /// Where lines go.
    public let logger: any Logger
    /// How much is logged.
    public let level: Level
    /// What is hidden.
    public let redactor: Redactor
    /// How many bytes of a body ``Level/verbose`` shows.
    public let bodyLimit: Int

    /// The last attempt that already has its line.
    private enum LoggedAttempt: CallContextKey {
        typealias Value = Int
    }

    /// Creates the interceptor.
    ///
    /// - Parameters:
    ///   - logger: Where lines go; the console by default.
    ///   - level: How much is logged; ``Level/minimal`` by default.
    ///   - redactor: What is hidden; `Redactor.default` by default.
    ///   - bodyLimit: How many bytes of a body ``Level/verbose`` shows; 4096 by default.
    public init(
        logger: any Logger = ConsoleLogger(),
        level: Level = .minimal,
        redactor: Redactor = .default,
        bodyLimit: Int = 4096
    ) {
        self.logger = logger
        self.level = level
        self.redactor = redactor
        self.bodyLimit = bodyLimit
    }

    /// Logs the request at ``Level/verbose``.
    ///
    /// - Parameter chain: The chain of this attempt.
    public func intercept(chain: InterceptorChain<Data>) async {
        guard level == .verbose else { return }
        let request = chain.request
        var lines = ["→ \(requestLine(request)) (attempt \(chain.attempt + 1))"]
        lines += headerLines(request.allHTTPHeaderFields ?? [:])
        if let body = request.httpBody, !body.isEmpty { lines.append(bodyText(body, request)) }
        logger.log(message: lines.joined(separator: "\n"))
    }

    /// Logs the attempt's line (and, at ``Level/verbose``, the response).
    ///
    /// - Parameters:
    ///   - chain: The chain of this attempt.
    ///   - response: The response head.
    ///   - data: The body.
    public func intercept(chain: InterceptorChain<Data>, response: HTTPURLResponse, data: Data) async {
        logAttempt(chain, outcome: "\(response.statusCode)", response: response, data: data, error: nil)
    }

    /// Logs the failed attempt's line and its error.
    ///
    /// - Parameters:
    ///   - chain: The chain of this attempt.
    ///   - error: The failure.
    public func intercept(chain: InterceptorChain<Data>, error: any Error) async {
        if case LeashError.unacceptableStatusCode(let status, let response, let data) = error {
            // The line already says the status; the error adds nothing below verbose.
            logAttempt(
                chain, outcome: "\(status)", response: response, data: data, error: level == .verbose ? error : nil)
        } else {
            logAttempt(chain, outcome: "failed", response: nil, data: nil, error: error)
        }
    }

    /// Logs attempts that did not reach the network: answered by an interceptor or not built.
    ///
    /// - Parameters:
    ///   - chain: The chain of this attempt.
    ///   - response: The result.
    public func intercept(chain: InterceptorChain<Data>, response: Response<Data>) async {
        guard chain.context[LoggedAttempt.self] != chain.attempt else { return }
        switch response {
        case .success(let data, let extra):
            let http = extra as? HTTPURLResponse
            let status = http.map { "\($0.statusCode)" } ?? "done"
            logAttempt(chain, outcome: status + " (no network)", response: http, data: data, error: nil)
        case .failure(let error):
            logAttempt(chain, outcome: "failed", response: nil, data: nil, error: error)
        }
    }

    private func logAttempt(
        _ chain: InterceptorChain<Data>,
        outcome: String,
        response: HTTPURLResponse?,
        data: Data?,
        error: (any Error)?
    ) {
        guard level > .none else { return }
        chain.context[LoggedAttempt.self] = chain.attempt
        let elapsed = ContinuousClock.now - chain.startedAt
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        var lines = [
            "\(requestLine(chain.request)) → \(outcome) in \(String(format: "%.1f", milliseconds)) ms "
                + "(attempt \(chain.attempt + 1))"
        ]
        if level == .verbose, let response {
            let headers = response.allHeaderFields.reduce(into: [String: String]()) { headers, field in
                if let name = field.key as? String, let value = field.value as? String { headers[name] = value }
            }
            lines += headerLines(headers)
            if let data, !data.isEmpty { lines.append(bodyText(data, chain.request)) }
        }
        logger.log(message: lines.joined(separator: "\n"))
        if let error {
            logger.log(
                error: RedactedError(error, redactor: redactor, values: redactor.secretValues(of: chain.request)))
        }
    }

    private func requestLine(_ request: URLRequest) -> String {
        "\(request.httpMethod ?? "GET") \(redactor.redact(url: request.url?.absoluteString ?? "?"))"
    }

    private func headerLines(_ headers: [String: String]) -> [String] {
        redactor.redact(headers: headers).sorted { $0.key < $1.key }.map { "  \($0.key): \($0.value)" }
    }

    private func bodyText(_ body: Data, _ request: URLRequest) -> String {
        var shown = body.prefix(bodyLimit)
        // A cut can split a UTF-8 sequence: drop up to three trailing bytes before giving up.
        var text = String(data: shown, encoding: .utf8)
        while text == nil, body.count > bodyLimit, shown.count > max(bodyLimit - 3, 0) {
            shown = shown.dropLast()
            text = String(data: shown, encoding: .utf8)
        }
        guard let text else { return "  <\(body.count) bytes of binary data>" }
        let redacted = redactor.redact(text: text, values: redactor.secretValues(of: request))
        let cut = body.count > bodyLimit ? " … (\(body.count - bodyLimit) more bytes)" : ""
        return "  " + redacted + cut
    }
}
