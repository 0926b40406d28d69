import Foundation
import Leash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Answers calls from a store of earlier responses, by a ``CachePolicy``.
///
/// ```swift
/// let cache = CacheInterceptor(policy: .cacheAndRenew, paths: ["users/**"])
/// let manager = try Manager.Builder().url(base).add(interceptor: cache).build()
///
/// for await delivery in client.responses(UsersEndpoint.list(page: 1), as: [User].self) {
///     // the stored list first, then the fresh one
/// }
/// ```
///
/// Leash keeps its own store because `URLCache` does not store network responses on Linux.
/// Only `GET` calls are cached unless `methods` says otherwise, only `200` responses are
/// stored, and a response with `Cache-Control: no-store` is not; downloads, uploads and streams
/// pass through untouched. A delivery from the store
/// carries an `HTTPURLResponse` with the header `X-Leash-Cache: hit` (see ``isCached(_:)``).
/// Entries are keyed by method and URL: clear the store when the user signs out.
public struct CacheInterceptor: ExecutionInterceptor, SuccessInterceptor, FailureInterceptor {
    /// The header that marks a delivery that came from the store.
    public static let cacheHeader = "X-Leash-Cache"

    /// When to answer from the store.
    public let policy: CachePolicy
    /// Where responses are kept.
    public let store: any DataStore
    /// The methods that are cached.
    public let methods: Set<HTTPMethod>
    /// The paths that are cached; empty means every path.
    public let paths: [PathPattern]

    /// The entry being revalidated in this attempt.
    private enum Revalidating: CallContextKey {
        typealias Value = CacheEntry
    }

    /// Creates the interceptor.
    ///
    /// - Parameters:
    ///   - policy: When to answer from the store.
    ///   - store: Where responses are kept; a ``MemoryStore`` by default.
    ///   - methods: The methods that are cached; `GET` by default.
    ///   - paths: Patterns of the paths to cache, relative to the base URL; every path when empty.
    public init(
        policy: CachePolicy,
        store: any DataStore = MemoryStore(),
        methods: Set<HTTPMethod> = [.get],
        paths: [PathPattern] = []
    ) {
        self.policy = policy
        self.store = store
        self.methods = methods
        self.paths = paths
    }

    /// Whether a delivery came from a cache store rather than the network.
    ///
    /// - Parameter extra: The delivery's `extra`.
    /// - Returns: `true` for a response a ``CacheInterceptor`` delivered from its store.
    public static func isCached(_ extra: (any Sendable)?) -> Bool {
        (extra as? HTTPURLResponse)?.value(forHTTPHeaderField: cacheHeader) == "hit"
    }

    /// Answers from the store or adds validators, by the policy.
    ///
    /// - Parameter chain: The chain of this attempt.
    public func intercept(chain: InterceptorChain<Data>) async {
        chain.context[Revalidating.self] = nil
        guard let key = key(for: chain), let entry = await store.entry(for: key) else { return }
        switch policy {
        case .cacheAndRenew:
            chain.complete(with: entry.data, extra: response(from: entry), finish: false)
        case .timeToLive(let duration):
            if Date().timeIntervalSince(entry.storedAt) < Double(duration.components.seconds)
                + Double(duration.components.attoseconds) / 1e18
            {
                chain.complete(with: entry.data, extra: response(from: entry))
            }
        case .validation:
            var request = chain.request
            guard request.value(forHTTPHeaderField: "If-None-Match") == nil,
                request.value(forHTTPHeaderField: "If-Modified-Since") == nil
            else { return }
            if let etag = entry.header("ETag") {
                request.setValue(etag, forHTTPHeaderField: "If-None-Match")
            } else if let lastModified = entry.header("Last-Modified") {
                request.setValue(lastModified, forHTTPHeaderField: "If-Modified-Since")
            } else {
                return
            }
            chain.context[Revalidating.self] = entry
            chain.proceed(with: request)
        case .cacheOnlyOnError:
            return
        }
    }

    /// Stores a fresh response, or answers a `304` from the store.
    ///
    /// - Parameters:
    ///   - chain: The chain of this attempt.
    ///   - response: The response head.
    ///   - data: The body.
    public func intercept(chain: InterceptorChain<Data>, response: HTTPURLResponse, data: Data) async {
        guard let key = key(for: chain) else { return }
        if response.statusCode == 304 {
            await answerNotModified(chain, key: key)
        } else if response.statusCode == 200,
            response.value(forHTTPHeaderField: "Cache-Control")?.lowercased().contains("no-store") != true
        {
            let headers = response.allHeaderFields.reduce(into: [String: String]()) { headers, field in
                if let name = field.key as? String, let value = field.value as? String { headers[name] = value }
            }
            let entry = CacheEntry(
                url: response.url?.absoluteString ?? "", statusCode: 200, headers: headers, data: data)
            await store.store(entry, for: key)
        }
    }

    /// Answers a `304` from the store, or a failure from the store under `cacheOnlyOnError`.
    ///
    /// - Parameters:
    ///   - chain: The chain of this attempt.
    ///   - error: The failure.
    public func intercept(chain: InterceptorChain<Data>, error: any Error) async {
        guard let key = key(for: chain) else { return }
        if case LeashError.unacceptableStatusCode(304, _, _) = error {
            await answerNotModified(chain, key: key)
            return
        }
        guard policy == .cacheOnlyOnError, Self.isWorthTheCache(error), let entry = await store.entry(for: key) else {
            return
        }
        chain.complete(with: entry.data, extra: response(from: entry))
    }

    private func answerNotModified(_ chain: InterceptorChain<Data>, key: String) async {
        guard var entry = chain.context[Revalidating.self] else { return }
        entry.storedAt = Date()
        await store.store(entry, for: key)
        chain.complete(with: entry.data, extra: response(from: entry))
    }

    private static func isWorthTheCache(_ error: any Error) -> Bool {
        switch error {
        case LeashError.transport, LeashError.timedOut: true
        case LeashError.unacceptableStatusCode(let status, _, _): status >= 500
        default: false
        }
    }

    /// The cache key of this call, or `nil` when its method or path is not cached.
    private func key(for chain: InterceptorChain<Data>) -> String? {
        // Downloads, uploads and streams do not hold their bodies in memory: nothing to store.
        guard chain.transfer == nil else { return nil }
        let method = chain.request.httpMethod ?? "GET"
        guard methods.contains(HTTPMethod(method)), let url = chain.request.url else { return nil }
        if !paths.isEmpty {
            let basePath = chain.client.manager.baseURL.path
            var path = url.path
            if path.hasPrefix(basePath) { path.removeFirst(basePath.count) }
            guard paths.contains(where: { $0.matches(path) }) else { return nil }
        }
        return method + " " + url.absoluteString
    }

    private func response(from entry: CacheEntry) -> HTTPURLResponse? {
        var headers = entry.headers
        headers[Self.cacheHeader] = "hit"
        return HTTPURLResponse(
            url: URL(string: entry.url) ?? URL(string: "http://cache.invalid")!,
            statusCode: entry.statusCode,
            httpVersion: "HTTP/1.1",
            headerFields: headers
        )
    }
}
