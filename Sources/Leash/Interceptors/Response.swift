/// The result of a call: a value with optional extra information, or an error.
///
/// A result that came from the network carries its `HTTPURLResponse` as ``extra``; a result
/// an interceptor gave with `complete(with:extra:)` carries what it passed.
public enum Response<Value: Sendable>: Sendable {
    /// The call produced a value.
    case success(value: Value, extra: (any Sendable)?)
    /// The call failed.
    case failure(any Error)

    /// The value, or `nil` for a failure.
    public var value: Value? {
        if case .success(let value, _) = self { return value }
        return nil
    }

    /// The extra information of a success, such as the `HTTPURLResponse`.
    public var extra: (any Sendable)? {
        if case .success(_, let extra) = self { return extra }
        return nil
    }

    /// The error, or `nil` for a success.
    public var error: (any Error)? {
        if case .failure(let error) = self { return error }
        return nil
    }

    /// Whether this is a success.
    public var isSuccess: Bool { value != nil }

    /// Whether this is a failure.
    public var isFailure: Bool { !isSuccess }

    /// The response as a `Result`, dropping ``extra``.
    public var result: Result<Value, any Error> {
        switch self {
        case .success(let value, _): .success(value)
        case .failure(let error): .failure(error)
        }
    }
}
