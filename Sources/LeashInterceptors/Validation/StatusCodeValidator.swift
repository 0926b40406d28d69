import Foundation
import Leash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Turns response statuses into errors of your own, for managers that let every status
/// through (`acceptableStatusCodes(nil)`).
///
/// ```swift
/// let manager = try Manager.Builder().url(base)
///     .acceptableStatusCodes(nil)
///     .add(interceptor: StatusCodeValidator(rules: [
///         .init(401...403) { _, _ in APIError.unauthorized },
///         .init(500...599) { response, _ in APIError.server(response.statusCode) },
///     ]))
///     .build()
/// ```
///
/// In the Success phase, the first rule whose statuses hold the response's status completes
/// the call with its error. A status that no rule names and that is outside `acceptable`
/// becomes `LeashError.unacceptableStatusCode(_:response:data:)`.
public struct StatusCodeValidator: SuccessInterceptor {
    /// Statuses mapped to an error.
    public struct Rule: Sendable {
        /// The statuses this rule covers.
        public let statuses: ClosedRange<Int>
        /// Makes the error from the response head and body.
        public let error: @Sendable (HTTPURLResponse, Data) -> any Error

        /// Creates a rule.
        ///
        /// - Parameters:
        ///   - statuses: The statuses it covers.
        ///   - error: Makes the error from the response head and body.
        public init(_ statuses: ClosedRange<Int>, error: @escaping @Sendable (HTTPURLResponse, Data) -> any Error) {
            self.statuses = statuses
            self.error = error
        }
    }

    /// The statuses that pass when no rule names them.
    public let acceptable: Range<Int>
    /// The rules, first match wins.
    public let rules: [Rule]

    /// Creates a validator.
    ///
    /// - Parameters:
    ///   - acceptable: The statuses that pass when no rule names them; `200..<300` by default.
    ///   - rules: The rules, first match wins.
    public init(acceptable: Range<Int> = 200..<300, rules: [Rule] = []) {
        self.acceptable = acceptable
        self.rules = rules
    }

    /// Completes the call with an error when the status calls for one.
    ///
    /// - Parameters:
    ///   - chain: The chain of this attempt.
    ///   - response: The response head.
    ///   - data: The body.
    public func intercept(chain: InterceptorChain<Data>, response: HTTPURLResponse, data: Data) async {
        let status = response.statusCode
        if let rule = rules.first(where: { $0.statuses.contains(status) }) {
            chain.complete(with: rule.error(response, data))
        } else if !acceptable.contains(status) {
            chain.complete(with: LeashError.unacceptableStatusCode(status, response: response, data: data))
        }
    }
}
