import Foundation
import Leash

/// Where ``LoggerInterceptor`` writes: bridge it to swift-log, `os.Logger` or your own.
///
/// ```swift
/// import Logging  // swift-log
///
/// struct SwiftLogBridge: LeashLogging.Logger {
///     let logger = Logging.Logger(label: "api")
///     func log(message: String) { logger.info("\(message)") }
///     func log(error: any Error) { logger.error("\(error)") }
/// }
/// ```
///
/// Everything Leash hands a logger is already redacted.
public protocol Logger: Sendable {
    /// Writes a message.
    ///
    /// - Parameter message: The message, already redacted.
    func log(message: String)

    /// Writes an error.
    ///
    /// - Parameter error: The error; its description is already redacted.
    func log(error: any Error)
}

/// Prints to standard output, and errors to standard error.
public struct ConsoleLogger: Logger {
    /// A prefix for every line, such as `[api] `.
    public let prefix: String

    /// Creates a console logger.
    ///
    /// - Parameter prefix: A prefix for every line; `[Leash] ` by default.
    public init(prefix: String = "[Leash] ") {
        self.prefix = prefix
    }

    /// Prints `message` to standard output.
    ///
    /// - Parameter message: The message.
    public func log(message: String) {
        print(prefix + message)
    }

    /// Prints `error` to standard error.
    ///
    /// - Parameter error: The error.
    public func log(error: any Error) {
        FileHandle.standardError.write(Data((prefix + "error: \(error)\n").utf8))
    }
}

/// An error whose description was redacted before it reached a ``Logger``.
public struct RedactedError: Error, CustomStringConvertible {
    /// The redacted description.
    public let description: String
    /// The original error, for code that needs its type; do not print it.
    public let underlying: any Error

    /// Wraps `error`, redacting its description.
    ///
    /// - Parameters:
    ///   - error: The error.
    ///   - redactor: The redactor.
    ///   - values: Secret values to hide wherever they appear.
    public init(_ error: any Error, redactor: Redactor = .default, values: [String] = []) {
        self.underlying = error
        self.description = redactor.redact(text: String(describing: error), values: values)
    }
}
