import Foundation
import Leash
import LeashTestServer
import LeashTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Random nested parameters, encoded by Leash, sent over the wire and parsed back by the
/// server, come back equal: query strings (bracket notation) and JSON bodies.
///
/// Seeded: a failure prints its seed; `LEASH_SEED=<n>` replays it. `LEASH_LONG=1` runs ten
/// times as many cases.
@Suite struct PropertyTests {
    static let cases = ProcessInfo.processInfo.environment["LEASH_LONG"] == "1" ? 2_000 : 200
    static let seed =
        ProcessInfo.processInfo.environment["LEASH_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 0...UInt64.max)

    @Test(arguments: TransportKind.allCases)
    func queryAndJSONRoundTripThroughTheServer(kind: TransportKind) async throws {
        var random = SplitMix64(seed: Self.seed)
        let received = Mutex<[String: Value]>([:])
        let server = try await TestServer.start { request in
            let id = request.header("X-Case") ?? ""
            let value: Value =
                request.method == "GET"
                ? .parse(pairs: request.queryItems)
                : (try? Value(json: JSONSerialization.jsonObject(with: request.body))) ?? .string("unparsable body")
            received.withLock { $0[id] = value }
            return .json("{}")
        }
        try await run(
            {
                try await withTransport(kind) { transport in
                    let client = Client(
                        manager: try Manager.Builder().url(server.baseURL).transport(transport).build())
                    for index in 0..<Self.cases {
                        let parameters = Value.randomObject(&random, depth: 3)
                        let method: HTTPMethod = index.isMultiple(of: 2) ? .get : .post
                        let endpoint = TestEndpoint(
                            "echo", method, parameters: parameters.any, headers: ["X-Case": "\(index)"])
                        _ = try await client.execute(endpoint, as: Empty.self)
                        let back = received.withLock { $0["\(index)"] }
                        #expect(
                            back == parameters,
                            "case \(index) (\(method.rawValue)), seed \(Self.seed): sent \(parameters), got \(String(describing: back))"
                        )
                        if back != parameters { return }
                    }
                }
            }, thenAlways: { try await server.shutdown() })
    }
}

/// A parameter value: what both a query string and JSON can carry without loss.
typealias Value = FormValue

extension FormValue {
    /// The value as Leash's `parameters` take it.
    var any: Any {
        switch self {
        case .string(let text): return text
        case .array(let items): return items
        case .object(let members): return members.mapValues(\.any)
        }
    }

    init(json: Any) throws {
        switch json {
        case let text as String: self = .string(text)
        case let items as [Any]: self = .array(items.map { $0 as? String ?? "\($0)" })
        case let members as [String: Any]: self = .object(try members.mapValues(Value.init(json:)))
        default: throw CocoaError(.coderInvalidValue)
        }
    }

    /// Characters that stress an encoder: reserved, percent, plus, unicode, control.
    static let alphabet = Array("aZ09-._~ !\"#$%&'()*+,/:;<=>?@\\^`{|}\u{0}\t\n\r€é中😀\u{301}ß")

    static func randomString(_ random: inout SplitMix64, allowEmpty: Bool) -> String {
        let length = Int(random.next() % 8) + (allowEmpty ? 0 : 1)
        return String((0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
    }

    /// A random object. Keys never contain brackets (bracket notation cannot tell them from
    /// nesting), nested keys are never empty (`a[]` means an array), and arrays are never
    /// empty (an empty array sends nothing).
    static func randomObject(_ random: inout SplitMix64, depth: Int) -> Value {
        var members: [String: Value] = [:]
        for _ in 0..<Int(random.next() % 4) + 1 {
            let key = randomString(&random, allowEmpty: depth == 3)
            switch random.next() % (depth > 0 ? 3 : 2) {
            case 0: members[key] = .string(randomString(&random, allowEmpty: true))
            case 1:
                members[key] = .array(
                    (0..<Int(random.next() % 3) + 1).map { _ in randomString(&random, allowEmpty: true) })
            default: members[key] = randomObject(&random, depth: depth - 1)
            }
        }
        return .object(members)
    }
}

/// A small seeded generator, so a failing case can be replayed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
