#if canImport(Security)
    import Foundation
    import Security

    // Apple platforms only: the glue between URLSession's server-trust challenge and
    // ServerTrustEvaluator, whose pin logic is shared with (and tested on) Linux.
    extension ServerTrustEvaluator {
        /// Evaluates a server-trust challenge's `trust` for `host`.
        ///
        /// - Throws: ``PinningFailure``.
        func evaluate(_ trust: SecTrust, host: String) throws {
            if case .pinnedCertificates(let certificates) = policy {
                let anchors = certificates.compactMap { SecCertificateCreateWithData(nil, $0 as CFData) }
                guard anchors.count == certificates.count else {
                    throw PinningFailure(policy: policy, host: host, reason: "a pinned certificate is not DER")
                }
                // Unchecked, a failure here would leave the system's roots in place: fail closed.
                guard SecTrustSetAnchorCertificates(trust, anchors as CFArray) == errSecSuccess,
                    SecTrustSetAnchorCertificatesOnly(trust, true) == errSecSuccess
                else {
                    throw PinningFailure(
                        policy: policy, host: host, reason: "the pinned certificates cannot be set as anchors")
                }
            }
            // The platform's evaluation first: signatures, dates and the host name.
            var error: CFError?
            guard SecTrustEvaluateWithError(trust, &error) else {
                throw PinningFailure(
                    policy: policy, host: host, reason: "the chain does not pass the platform's evaluation",
                    underlying: error)
            }
            guard case .pinnedPublicKeys = policy else { return }
            let certificates = (SecTrustCopyCertificateChain(trust) as? [SecCertificate]) ?? []
            try checkPublicKeys(
                host: host,
                chain: certificates.map { certificate in
                    (
                        certificate: SecCertificateCopyData(certificate) as Data,
                        key: {
                            SecCertificateCopyKey(certificate)
                                .flatMap { SecKeyCopyExternalRepresentation($0, nil) }
                                .map { $0 as Data }
                        }
                    )
                })
        }
    }
#endif
