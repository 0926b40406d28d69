// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Leash",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Leash", targets: ["Leash"]),
        .library(name: "LeashInterceptors", targets: ["LeashInterceptors"]),
        .library(name: "LeashLogging", targets: ["LeashLogging"]),
        // Opt-in: the one product that links a package. Depending on Leash alone does not build it.
        .library(name: "LeashAsyncHTTPClient", targets: ["LeashAsyncHTTPClient"]),
    ],
    dependencies: [
        // Leash, LeashInterceptors and LeashLogging link none of these. AsyncHTTPClient and
        // NIOSSL serve LeashAsyncHTTPClient; the rest serve the tests, the Example and the benchmarks.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        .target(name: "Leash"),
        .target(name: "LeashInterceptors", dependencies: ["Leash"]),
        .target(name: "LeashLogging", dependencies: ["Leash"]),
        .target(
            name: "LeashAsyncHTTPClient",
            dependencies: [
                "Leash",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .target(
            name: "LeashTestServer",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Tests/LeashTestServer"
        ),
        .target(
            name: "LeashTestSupport",
            dependencies: ["Leash", "LeashAsyncHTTPClient", "LeashTestServer"],
            path: "Tests/LeashTestSupport"
        ),
        .executableTarget(
            name: "LeashExample",
            dependencies: ["Leash", "LeashInterceptors", "LeashLogging", "LeashTestServer"],
            path: "Example"
        ),
        .executableTarget(
            name: "LeashBenchServer",
            dependencies: ["LeashTestServer"],
            path: "Benchmarks/Server"
        ),
        .executableTarget(
            name: "LeashBench",
            dependencies: [
                "Leash", "LeashLogging", "LeashAsyncHTTPClient",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            path: "Benchmarks/Harness"
        ),
        .testTarget(
            name: "LeashTests",
            dependencies: ["Leash", "LeashInterceptors", "LeashLogging", "LeashTestServer", "LeashTestSupport"]
        ),
        .testTarget(
            name: "LeashInterceptorsTests",
            dependencies: ["LeashInterceptors", "LeashTestServer", "LeashTestSupport"]
        ),
        .testTarget(
            name: "DocumentationTests",
            dependencies: ["Leash", "LeashInterceptors", "LeashLogging", "LeashTestSupport"]
        ),
        .testTarget(
            name: "LeashLoggingTests",
            dependencies: ["LeashLogging", "LeashInterceptors", "LeashTestServer", "LeashTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
