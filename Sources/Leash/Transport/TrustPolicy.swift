import Foundation

/// Which servers a transport trusts over TLS.
///
/// ```swift
/// let transport = try URLSessionTransport(
///     trustPolicy: .pinnedPublicKeys(["api.example.com": ["r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E="]]))
/// ```
///
/// A pin is the base64 SHA-256 of the certificate's DER SubjectPublicKeyInfo:
///
///     openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform DER \
///         | openssl dgst -sha256 -binary | openssl base64
///
/// Public-key pins apply after the platform's own evaluation (signatures, dates, host name),
/// and any certificate of the chain may carry the pinned key: pin your CA's key, or the
/// leaf's key plus a backup. A host missing from the dictionary is refused, so a policy with
/// pins never connects anywhere unpinned.
///
/// A transport that cannot enforce a policy on the current platform refuses to start with
/// ``LeashError/invalidConfiguration(_:)`` — it never connects unpinned:
///
/// | policy | `URLSessionTransport` on Apple platforms | `URLSessionTransport` on Linux | `AsyncHTTPClientTransport` |
/// |---|---|---|---|
/// | ``system`` | yes | yes | yes |
/// | ``pinnedCertificates(_:)`` | yes, as the only anchors | no: URLSession never delivers server-trust challenges there | yes, as the only trust roots |
/// | ``pinnedPublicKeys(_:)`` | yes | no | no: AsyncHTTPClient offers no hook to check the key during the handshake |
///
/// A refused server ends the call with ``LeashError/transport(_:)`` carrying a
/// ``PinningFailure``.
public enum TrustPolicy: Sendable, Hashable {
    /// The platform's trust store, as browsers use it.
    case system
    /// Trust only chains that end in one of these certificates (DER), such as your own CA or a
    /// self-signed server certificate.
    ///
    /// The platform's other rules still apply. On Apple platforms the server certificate needs
    /// its name in the Subject Alternative Name, the `serverAuth` extended key usage and a
    /// validity of at most 825 days, even under an anchor of your own.
    case pinnedCertificates([Data])
    /// Per host, the base64 SHA-256 digests of the accepted Subject Public Key Info (DER); the
    /// chain must also pass the platform's evaluation.
    case pinnedPublicKeys([String: [String]])

    /// A short name, for error messages.
    var name: String {
        switch self {
        case .system: "system trust"
        case .pinnedCertificates: "pinned certificates"
        case .pinnedPublicKeys: "pinned public keys"
        }
    }
}
