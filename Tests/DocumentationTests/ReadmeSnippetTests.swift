import Foundation
import LeashTestSupport
import Testing

/// Compiles every Swift sample in README.md against the built library modules, so the README
/// cannot drift from the API. Each sample becomes the body of its own function, after a
/// prelude that stands in for the app's own types (`User`, `authClient`, …).
@Suite struct ReadmeSnippetTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static let prelude = """
        import Foundation
        import Leash
        import LeashInterceptors
        import LeashLogging

        struct User: Codable, Sendable { var id: Int; var name: String }
        struct TokenReply: Decodable, Sendable { var token: String }
        enum AuthAPI: Endpoint {
            case refresh
            var path: String { "auth/refresh" }
            var method: HTTPMethod { .post }
        }
        let authClient = Client(manager: try! Manager.Builder().url("https://auth.example.com").build())
        let savedToken: String? = nil

        """

    /// The ```swift blocks of a Markdown file.
    static func swiftBlocks(in markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line.trimmingCharacters(in: .whitespaces) == "```swift" {
                current = []
            } else if current != nil, line.trimmingCharacters(in: .whitespaces) == "```" {
                blocks.append(current!.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// The folder with the built `.swiftmodule` files, found from the test binary's path.
    static func modulesDirectory() -> URL? {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<6 {
            let modules = directory.appendingPathComponent("Modules")
            if FileManager.default.fileExists(atPath: modules.appendingPathComponent("Leash.swiftmodule").path) {
                return modules
            }
            directory.deleteLastPathComponent()
        }
        return nil
    }

    @Test func theReadmeHasSamples() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(Self.swiftBlocks(in: readme).count >= 2)
    }

    @Test func everyReadmeSampleCompiles() async throws {
        #if os(Linux)
            let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
            let modules = try #require(Self.modulesDirectory(), "built modules not found next to the test binary")
            var source = Self.prelude
            for (index, block) in Self.swiftBlocks(in: readme).enumerated() {
                let body = block.split(separator: "\n", omittingEmptySubsequences: false)
                    .filter { !$0.hasPrefix("import ") }
                    .map { "    " + $0 }
                    .joined(separator: "\n")
                source += "\n@MainActor func readmeSample\(index)() async throws {\n\(body)\n}\n"
            }
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "readme-\(UUID().uuidString).swift")
            try source.write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }

            let (status, diagnostics) = try await offThePool { try Self.typecheck(file, modules: modules) }
            #expect(status == 0, "README samples do not compile:\n\(diagnostics)\n\(source)")
            // A sample may leave its result unused; any other warning is worth fixing.
            let warnings = diagnostics.split(separator: "\n").filter {
                $0.contains("warning:") && !$0.contains("never used") && !$0.contains("never mutated")
            }
            #expect(warnings.isEmpty, "README samples compile with warnings:\n\(diagnostics)")
        #endif
    }

    /// Type-checks `file` against the modules in `modules`: the exit status and diagnostics.
    static func typecheck(_ file: URL, modules: URL) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swiftc", "-typecheck", "-swift-version", "6", "-I", modules.path, file.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let diagnostics = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, diagnostics)
    }
}
