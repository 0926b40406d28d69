import Foundation

#if canImport(Security)
    import Security
#endif

/// The server's certificate chain did not satisfy the transport's ``TrustPolicy``.
///
/// It comes wrapped in ``LeashError/transport(_:)``, and its description names the policy, the
/// host and what did not match.
public struct PinningFailure: Error, CustomStringConvertible {
    /// The policy that refused the server.
    public let policy: TrustPolicy
    /// The host that was refused, when the transport knows it.
    public let host: String?
    /// What did not match, in words.
    public let reason: String
    /// The platform's error underneath, if any.
    public let underlying: (any Error)?

    /// Creates a failure.
    ///
    /// - Parameters:
    ///   - policy: The policy that refused the server.
    ///   - host: The host that was refused.
    ///   - reason: What did not match.
    ///   - underlying: The platform's error underneath.
    public init(policy: TrustPolicy, host: String? = nil, reason: String, underlying: (any Error)? = nil) {
        self.policy = policy
        self.host = host
        self.reason = reason
        self.underlying = underlying
    }

    /// What happened and what to do.
    public var description: String {
        let server = host.map { "the server \($0)" } ?? "the server"
        let cause = underlying.map { " (\($0))" } ?? ""
        return "\(server) does not match the \(policy.name): \(reason)\(cause); check the pins, "
            + "or the server is not the one you expect"
    }
}

/// Public-key pins: the base64 SHA-256 of a certificate's DER SubjectPublicKeyInfo, as
/// `openssl x509 -pubkey -noout | openssl pkey -pubin -outform DER | openssl dgst -sha256 -binary | base64`
/// prints it.
///
/// Apple's `SecKeyCopyExternalRepresentation` gives only the key itself (PKCS #1 for RSA, an
/// uncompressed X9.63 point for elliptic curves), so the SubjectPublicKeyInfo around it is
/// rebuilt here before hashing.
package enum PublicKeyPin {
    /// The pin of a key given as Apple's external representation, or `nil` for a key type
    /// that cannot be pinned (neither RSA nor P-256, P-384 or P-521).
    package static func pin(ofExternalRepresentation key: Data) -> String? {
        subjectPublicKeyInfo(ofExternalRepresentation: key).map { SHA256.hash($0).base64EncodedString() }
    }

    /// The DER SubjectPublicKeyInfo around `key`.
    package static func subjectPublicKeyInfo(ofExternalRepresentation key: Data) -> Data? {
        let algorithm: [UInt8]
        switch (key.first, key.count) {
        case (0x30, _):
            // rsaEncryption (1.2.840.113549.1.1.1) with NULL parameters.
            algorithm = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01, 0x05, 0x00]
        case (0x04, 65):
            // id-ecPublicKey (1.2.840.10045.2.1) on prime256v1 (1.2.840.10045.3.1.7).
            algorithm = ecPublicKey + [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
        case (0x04, 97):
            // … on secp384r1 (1.3.132.0.34).
            algorithm = ecPublicKey + [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x22]
        case (0x04, 133):
            // … on secp521r1 (1.3.132.0.35).
            algorithm = ecPublicKey + [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x23]
        default:
            return nil
        }
        let bitString = der(tag: 0x03, [0x00] + [UInt8](key))
        return Data(der(tag: 0x30, der(tag: 0x30, algorithm) + bitString))
    }

    private static let ecPublicKey: [UInt8] = [0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]

    /// A DER element: tag, definite length, contents.
    private static func der(tag: UInt8, _ contents: [UInt8]) -> [UInt8] {
        var length: [UInt8] = []
        if contents.count < 0x80 {
            length = [UInt8(contents.count)]
        } else {
            var count = contents.count
            while count > 0 {
                length.insert(UInt8(truncatingIfNeeded: count), at: 0)
                count >>= 8
            }
            length.insert(0x80 | UInt8(length.count), at: 0)
        }
        return [tag] + length + contents
    }
}

/// Decides whether a server's certificate chain satisfies a ``TrustPolicy``, for transports
/// that see the chain (URLSession on Apple platforms). The platform's own evaluation (the
/// signatures, dates and host name) runs first; this adds the pins.
package final class ServerTrustEvaluator: Sendable {
    package let policy: TrustPolicy
    /// Per lowercased host, the accepted pins.
    private let pins: [String: Set<String>]
    /// Pins already computed, by certificate (DER): a certificate's key is hashed once.
    private let cache = Locked<[Data: String]>([:])
    private static let cacheLimit = 256

    /// Checks the policy's contents.
    ///
    /// - Throws: ``LeashError/invalidConfiguration(_:)`` for no certificates, no pins, or a pin
    ///   that is not the base64 of 32 bytes.
    package init(policy: TrustPolicy) throws {
        self.policy = policy
        switch policy {
        case .system:
            pins = [:]
        case .pinnedCertificates(let certificates):
            guard !certificates.isEmpty else {
                throw LeashError.invalidConfiguration("pinnedCertificates needs at least one certificate")
            }
            #if canImport(Security)
                // As AsyncHTTPClientTransport does: a certificate that is not DER fails here, not
                // at the first connection.
                guard certificates.allSatisfy({ SecCertificateCreateWithData(nil, $0 as CFData) != nil }) else {
                    throw LeashError.invalidConfiguration("a pinned certificate is not a DER certificate")
                }
            #endif
            pins = [:]
        case .pinnedPublicKeys(let byHost):
            var pins: [String: Set<String>] = [:]
            for (host, list) in byHost {
                guard !list.isEmpty else {
                    throw LeashError.invalidConfiguration("pinnedPublicKeys has no pins for \(host)")
                }
                for pin in list where Data(base64Encoded: pin)?.count != 32 {
                    throw LeashError.invalidConfiguration(
                        "the pin '\(pin)' for \(host) is not a base64 SHA-256 digest (44 characters ending in '=')")
                }
                pins[host.lowercased(), default: []].formUnion(list)
            }
            guard !pins.isEmpty else {
                throw LeashError.invalidConfiguration("pinnedPublicKeys needs pins for at least one host")
            }
            self.pins = pins
        }
    }

    /// Checks a chain the platform has already trusted against the public-key pins for `host`:
    /// one certificate anywhere in the chain must carry a pinned key. A host with no pins is
    /// refused: a policy with pins never connects unpinned.
    ///
    /// - Parameters:
    ///   - host: The host connected to.
    ///   - chain: The chain, leaf first: each certificate's DER and a way to get its key's
    ///     external representation, asked only when the certificate's pin is not cached.
    /// - Throws: ``PinningFailure``.
    package func checkPublicKeys(host: String, chain: [(certificate: Data, key: () -> Data?)]) throws {
        guard let accepted = pins[host.lowercased()] else {
            throw PinningFailure(policy: policy, host: host, reason: "no pins are configured for this host")
        }
        var seen: [String] = []
        for (certificate, key) in chain {
            guard let pin = pin(of: certificate, key: key) else { continue }
            if accepted.contains(pin) { return }
            seen.append(pin)
        }
        throw PinningFailure(
            policy: policy, host: host,
            reason: "no certificate in the chain has a pinned key (the chain's keys: \(seen.joined(separator: ", ")))")
    }

    private func pin(of certificate: Data, key: () -> Data?) -> String? {
        if let cached = cache.withLock({ $0[certificate] }) { return cached }
        guard let external = key(), let pin = PublicKeyPin.pin(ofExternalRepresentation: external) else { return nil }
        cache.withLock { cache in
            if cache.count >= Self.cacheLimit { cache.removeAll() }
            cache[certificate] = pin
        }
        return pin
    }
}
