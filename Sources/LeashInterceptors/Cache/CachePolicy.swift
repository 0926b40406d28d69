/// When a ``CacheInterceptor`` answers from its store and when it goes to the network.
public enum CachePolicy: Sendable, Hashable {
    /// Deliver the stored response at once (`finish: false`), then fetch and deliver a fresh
    /// one: the original Leash's cache-then-network. Callers of `responses(_:as:)` or the
    /// completion-handler `execute` receive both; `async` calls return the fresh one.
    case cacheAndRenew
    /// Go to the network; when it fails (transport error, timeout or a 5xx), deliver the
    /// stored response instead.
    case cacheOnlyOnError
    /// Answer from the store without the network while the stored response is younger than
    /// the duration (Nomosi's time to live); fetch and store otherwise.
    case timeToLive(Duration)
    /// Revalidate with the server: send `If-None-Match` (from `ETag`) or `If-Modified-Since`
    /// (from `Last-Modified`), and answer a `304 Not Modified` from the store.
    case validation
}
