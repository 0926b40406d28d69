// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Leash",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Leash", targets: ["Leash"]),
        .library(name: "LeashInterceptors", targets: ["LeashInterceptors"]),
        .library(name: "LeashLogging", targets: ["LeashLogging"]),
    ],
    dependencies: [
        // Test and Example only: the library products above link none of these.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2")
    ],
    targets: [
        .target(name: "Leash"),
        .target(name: "LeashInterceptors", dependencies: ["Leash"]),
        .target(name: "LeashLogging", dependencies: ["Leash"]),
        .target(
            name: "LeashTestServer",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/LeashTestServer"
        ),
        .target(
            name: "LeashTestSupport",
            dependencies: ["Leash", "LeashTestServer"],
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
            dependencies: ["Leash", "LeashLogging"],
            path: "Benchmarks/Harness"
        ),
        .testTarget(
            name: "LeashTests",
            dependencies: ["Leash", "LeashTestServer", "LeashTestSupport"]
        ),
        .testTarget(
            name: "LeashInterceptorsTests",
            dependencies: ["LeashInterceptors", "LeashTestServer", "LeashTestSupport"]
        ),
        .testTarget(
            name: "DocumentationTests",
            dependencies: ["Leash", "LeashInterceptors", "LeashLogging"]
        ),
        .testTarget(
            name: "LeashLoggingTests",
            dependencies: ["LeashLogging", "LeashInterceptors", "LeashTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
