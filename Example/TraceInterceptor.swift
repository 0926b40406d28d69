import Foundation
import Leash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Prints each attempt as it starts and ends: a hand-written logger in a few lines.
struct TraceInterceptor: ExecutionInterceptor, CompletionInterceptor {
    func intercept(chain: InterceptorChain<Data>) async {
        let method = chain.request.httpMethod ?? "?"
        let url = chain.request.url?.absoluteString ?? "?"
        print("  → \(method) \(url)" + (chain.attempt > 0 ? "  (attempt \(chain.attempt + 1))" : ""))
    }

    func intercept(chain: InterceptorChain<Data>, response: Response<Data>) async {
        let elapsed = ContinuousClock.now - chain.startedAt
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3
        let outcome: String
        switch response {
        case .success(let data, let extra):
            let status = (extra as? HTTPURLResponse)?.statusCode ?? 0
            outcome = "\(status), \(data.count) bytes"
        case .failure(let error):
            outcome = "failed: \(error)"
        }
        print("  ← \(outcome) in \(String(format: "%.1f", milliseconds)) ms")
    }
}

/// Retries a call once when the server says 503: the Failure phase deciding `retry()`.
struct RetryOn503: FailureInterceptor {
    func intercept(chain: InterceptorChain<Data>, error: any Error) async {
        guard case LeashError.unacceptableStatusCode(503, _, _) = error, chain.attempt == 0 else { return }
        print("  ↻ 503 from the server: RetryOn503 asks for another attempt")
        chain.retry()
    }
}
