import Foundation
import Leash
import LeashTestServer
import LeashTestSupport
import Testing

/// The parts of public-key pinning that do not need Apple's Security framework, checked against
/// `openssl`: SHA-256, the SubjectPublicKeyInfo rebuilt around a key's external representation,
/// and the evaluator's decision.
@Suite struct PublicKeyPinTests {
    @Test func sha256MatchesTheStandardVectors() {
        let vectors: [(String, String)] = [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
            (
                String(repeating: "a", count: 1_000_000),
                "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
            ),
        ]
        for (message, digest) in vectors {
            #expect(hex(SHA256.hash(Data(message.utf8))) == digest, "\(message.prefix(10))…")
        }
    }

    @Test func sha256MatchesOpenSSLAtEveryPaddingBoundary() throws {
        var generator = SystemRandomNumberGenerator()
        // Every length around one and two blocks, where the padding changes shape.
        for length in Array(0...130) + [1000, 4096, 65_537] {
            let data = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let expected = try OpenSSL.output(["dgst", "-sha256", "-binary"], input: data)
            #expect(SHA256.hash(data) == expected, "length \(length)")
        }
        // A slice whose indices do not start at zero.
        let whole = Data((0..<200).map { UInt8($0) })
        let slice = whole[37..<150]
        #expect(SHA256.hash(slice) == (try OpenSSL.output(["dgst", "-sha256", "-binary"], input: Data(slice))))
    }

    @Test(arguments: [
        KeyKind.rsa(2048), .rsa(3072), .rsa(4096), .ec("P-256", 65), .ec("P-384", 97), .ec("P-521", 133),
    ])
    func theRebuiltSubjectPublicKeyInfoIsOpenSSLs(kind: KeyKind) throws {
        let key = try TestKey.make(kind)
        #expect(PublicKeyPin.subjectPublicKeyInfo(ofExternalRepresentation: key.external) == key.subjectPublicKeyInfo)
        #expect(PublicKeyPin.pin(ofExternalRepresentation: key.external) == key.pin)
    }

    @Test func keysThatCannotBePinnedGiveNoPin() {
        #expect(PublicKeyPin.pin(ofExternalRepresentation: Data()) == nil)
        #expect(PublicKeyPin.pin(ofExternalRepresentation: Data([0x04] + Array(repeating: 1, count: 31))) == nil)
        #expect(PublicKeyPin.pin(ofExternalRepresentation: Data(repeating: 7, count: 32)) == nil)
    }

    @Test func theEvaluatorAcceptsAChainWithAPinnedKeyAnywhere() throws {
        let leaf = try TestKey.make(.ec("P-256", 65))
        let root = try TestKey.make(.rsa(2048))
        let evaluator = try ServerTrustEvaluator(policy: .pinnedPublicKeys(["API.example.com": [root.pin]]))
        let chain = [leaf.link, root.link]
        #expect(throws: Never.self) { try evaluator.checkPublicKeys(host: "api.example.com", chain: chain) }
        #expect(throws: Never.self) { try evaluator.checkPublicKeys(host: "api.EXAMPLE.com", chain: chain) }
    }

    @Test func theEvaluatorRefusesNamingThePinFailure() throws {
        let served = try TestKey.make(.ec("P-256", 65))
        let pinned = try TestKey.make(.ec("P-256", 65))
        let evaluator = try ServerTrustEvaluator(policy: .pinnedPublicKeys(["localhost": [pinned.pin]]))
        do {
            try evaluator.checkPublicKeys(host: "localhost", chain: [served.link])
            Issue.record("a chain without the pinned key was accepted")
        } catch let failure as PinningFailure {
            #expect(failure.host == "localhost")
            #expect(failure.description.contains("pinned public keys"))
            #expect(failure.description.contains(served.pin), "the description shows the keys it saw")
        }
        // A host the policy has no pins for is refused, not let through unpinned.
        #expect(throws: PinningFailure.self) {
            try evaluator.checkPublicKeys(host: "elsewhere.example", chain: [pinned.link])
        }
        // So is a chain with no key that can be pinned.
        #expect(throws: PinningFailure.self) {
            try evaluator.checkPublicKeys(host: "localhost", chain: [(certificate: Data([1]), key: { nil })])
        }
    }

    @Test func aCertificatesPinIsComputedOnce() throws {
        let key = try TestKey.make(.ec("P-256", 65))
        let evaluator = try ServerTrustEvaluator(policy: .pinnedPublicKeys(["localhost": [key.pin]]))
        let asked = Counter()
        let link: (certificate: Data, key: () -> Data?) = (
            certificate: key.subjectPublicKeyInfo,
            key: {
                asked.increment()
                return key.external
            }
        )
        for _ in 0..<5 { try evaluator.checkPublicKeys(host: "localhost", chain: [link]) }
        #expect(asked.value == 1)
    }

    @Test func malformedPoliciesRefuseToStart() {
        for policy: TrustPolicy in [
            .pinnedPublicKeys([:]), .pinnedPublicKeys(["localhost": []]), .pinnedPublicKeys(["localhost": ["AAAA"]]),
            .pinnedPublicKeys(["localhost": ["not base64 at all"]]), .pinnedCertificates([]),
        ] {
            #expect(throws: LeashError.self, "\(policy)") { try ServerTrustEvaluator(policy: policy) }
        }
    }

    @Test func urlSessionOnLinuxRefusesPinsItCannotEnforce() throws {
        #if !canImport(Darwin)
            let pin = try TestKey.make(.ec("P-256", 65)).pin
            #expect(throws: LeashError.self) {
                try URLSessionTransport(trustPolicy: .pinnedPublicKeys(["localhost": [pin]]))
            }
            #expect(throws: LeashError.self) {
                try URLSessionTransport(trustPolicy: .pinnedCertificates([try TestCertificate.make().der]))
            }
        #endif
    }
}

/// A key type `openssl` makes.
enum KeyKind: Sendable, CustomTestStringConvertible {
    case rsa(Int)
    /// A curve, and the length of its uncompressed point.
    case ec(String, Int)

    var testDescription: String {
        switch self {
        case .rsa(let bits): "RSA \(bits)"
        case .ec(let curve, _): curve
        }
    }
}

/// A key made by `openssl`, with what Apple's `SecKeyCopyExternalRepresentation` would give
/// for it and the SubjectPublicKeyInfo and pin `openssl` computes.
private struct TestKey {
    let external: Data
    let subjectPublicKeyInfo: Data
    let pin: String

    /// The certificate-and-key pair the evaluator is given (the SPKI stands in for the certificate).
    var link: (certificate: Data, key: () -> Data?) {
        let external = external
        return (certificate: subjectPublicKeyInfo, key: { external })
    }

    static func make(_ kind: KeyKind) throws -> TestKey {
        let privateKey: Data
        let external: Data
        switch kind {
        case .rsa(let bits):
            privateKey = try OpenSSL.output(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:\(bits)"])
            // PKCS #1 RSAPublicKey, as Apple's external representation of an RSA key.
            external = try OpenSSL.output(["rsa", "-RSAPublicKey_out", "-outform", "DER"], input: privateKey)
        case .ec(let curve, let pointLength):
            privateKey = try OpenSSL.output(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:\(curve)"])
            // The uncompressed point (04 || X || Y) ends the DER public key.
            let spki = try OpenSSL.output(["pkey", "-pubout", "-outform", "DER"], input: privateKey)
            external = spki.suffix(pointLength)
            #expect(external.first == 0x04)
        }
        let spki = try OpenSSL.output(["pkey", "-pubout", "-outform", "DER"], input: privateKey)
        let digest = try OpenSSL.output(["dgst", "-sha256", "-binary"], input: spki)
        return TestKey(external: Data(external), subjectPublicKeyInfo: spki, pin: digest.base64EncodedString())
    }
}

private func hex(_ data: Data) -> String {
    data.map { String(format: "%02x", $0) }.joined()
}
