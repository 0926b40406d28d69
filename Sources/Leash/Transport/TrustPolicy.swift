import Foundation

/// Which servers a transport trusts over TLS.
///
/// ```swift
/// let transport = try AsyncHTTPClientTransport(trustPolicy: .pinnedCertificates([caDER]))
/// ```
///
/// A transport that cannot enforce a policy on the current platform refuses to start with
/// ``LeashError/invalidConfiguration(_:)`` — it never connects unpinned:
///
/// | policy | `URLSessionTransport` on Linux | `AsyncHTTPClientTransport` |
/// |---|---|---|
/// | ``system`` | yes | yes |
/// | ``pinnedCertificates(_:)`` | no: URLSession never delivers server-trust challenges there | yes, as the only trust roots |
/// | ``pinnedPublicKeys(_:)`` | no | no: AsyncHTTPClient offers no hook to check the key during the handshake |
public enum TrustPolicy: Sendable, Hashable {
    /// The platform's trust store, as browsers use it.
    case system
    /// Trust only chains that end in one of these certificates (DER), such as your own CA or a
    /// self-signed server certificate.
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
