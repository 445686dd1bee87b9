// swift-tools-version:6.0
import Foundation
import PackageDescription

// A path dependency is identified by its directory's name, which is wherever the checkout was cloned.
let parentPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

// The libFuzzer harness lives in its own package so the main package's build and CI stay as they are.
// It is built with the fuzzer sanitizer on every module, so coverage guides the search through the
// wire and SQL layers; libFuzzer supplies `main`. Run: scripts/fuzz.sh (docs/FUZZING.md).
let package = Package(
    name: "PGModelFuzz",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        .executableTarget(
            name: "PGModelFuzz",
            dependencies: [
                // The server and the layers under it (wire, SQL, core), whose internals the harness
                // reaches with `@_spi(PGModelInternals) import`.
                .product(name: "PGModelServer", package: parentPackage),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6), .unsafeFlags(["-parse-as-library"])]
        ),
    ]
)
