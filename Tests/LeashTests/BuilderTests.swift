import Foundation
import Leash
import LeashTestSupport
import Testing

@Suite struct BuilderTests {
    @Test func componentsMakeTheBaseURL() throws {
        let manager = try Manager.Builder().scheme("http").host("127.0.0.1").port(8080).path("api").build()
        #expect(manager.baseURL.absoluteString == "http://127.0.0.1:8080/api")
    }

    @Test func urlSetsEverything() throws {
        let manager = try Manager.Builder().url("http://localhost:9000/api/v2/").build()
        #expect(manager.baseURL.host == "localhost")
        #expect(manager.baseURL.port == 9000)
        #expect(manager.baseURL.path.hasPrefix("/api/v2"))
    }

    @Test func defaults() throws {
        let manager = try Manager.Builder().host("example.com").build()
        #expect(manager.baseURL.absoluteString == "https://example.com")
        #expect(manager.timeout == 60)
        #expect(manager.maxRetries == 5)
        #expect(manager.acceptableStatusCodes == 200..<300)
        #expect(manager.transport is URLSessionTransport)
    }

    @Test func theBuilderMutatesInPlace() throws {
        let builder = Manager.Builder()
        builder.url("https://example.com")
        builder.header("X-A", "1")
        builder.maxRetries(2)
        builder.acceptableStatusCodes(nil)
        let manager = try builder.build()
        #expect(manager.headers == ["X-A": "1"])
        #expect(manager.maxRetries == 2)
        #expect(manager.acceptableStatusCodes == nil)
    }

    @Test func interceptorsReplacesAndAddAppends() throws {
        let recorder = Recorder()
        let manager = try Manager.Builder().url("https://example.com")
            .add(interceptor: Probe(name: "a", recorder: recorder))
            .interceptors([Probe(name: "b", recorder: recorder)])
            .add(interceptor: Probe(name: "c", recorder: recorder))
            .build()
        #expect(manager.interceptors.compactMap { ($0 as? Probe)?.name } == ["b", "c"])
    }

    @Test(arguments: [
        "", "localhost", "ftp://example.com", "http://", "http:///path", "https://ex ample.com",
        "http://example.com/?q=1", "mailto:a@b.c",
    ])
    func invalidBaseURLsThrow(url: String) {
        #expect {
            try Manager.Builder().url(url).build()
        } throws: { error in
            guard case LeashError.invalidURL = error else { return false }
            return true
        }
    }

    @Test func schemeMustBeHTTP() {
        #expect(throws: LeashError.self) { try Manager.Builder().scheme("ws").host("example.com").build() }
        #expect(throws: LeashError.self) { try Manager.Builder().build() }
    }

    @Test(arguments: [0.0, -1.0, Double.infinity, Double.nan])
    func timeoutMustBePositive(seconds: Double) {
        #expect {
            try Manager.Builder().url("https://example.com").timeout(seconds).build()
        } throws: { error in
            guard case LeashError.invalidConfiguration = error else { return false }
            return true
        }
    }

    @Test func negativeRetriesAndBadHeadersAreRefused() {
        #expect(throws: LeashError.self) { try Manager.Builder().url("https://example.com").maxRetries(-1).build() }
        #expect(throws: LeashError.self) {
            try Manager.Builder().url("https://example.com").header("X-A", "a\nb").build()
        }
    }

    @Test func errorDescriptionsHideSecrets() throws {
        let error = LeashError.invalidURL("https://example.com/a b?token=abc123&page=2")
        #expect(!error.description.contains("abc123"))
        #expect(error.description.contains("page=2"))
        let transport = LeashError.transport(TestMessage("failed: Authorization: Bearer s3cr3t, password=hunter2"))
        #expect(!transport.description.contains("s3cr3t"))
        #expect(!transport.description.contains("hunter2"))
        #expect(transport.description.contains("***"))
    }

    struct TestMessage: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
