// swift-tools-version:6.0
import Foundation
import PackageDescription

// A path dependency is identified by its directory's name, which is wherever the checkout was cloned.
let parentPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

// Benchmarks live in their own package so the main package's CI build stays small; they build in
// release mode against the checkout one directory up. Run: scripts/benchmark.sh (or see README there).
let package = Package(
    name: "PGModelBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // Fluent 4, the comparison ORM of the side-by-side suite. FluentKit is Fluent's ORM without Vapor's
        // HTTP stack (vapor/fluent only adds the Application glue), so the benchmark links the ORM and its
        // PostgreSQL driver directly and does not build a web framework it never calls.
        .package(url: "https://github.com/vapor/fluent-kit.git", from: "1.57.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver.git", from: "2.14.0"),
        // The metrics backends `--observability` compares.
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
    ],
    targets: [
        .executableTarget(
            name: "PGModelBenchmarks",
            dependencies: [
                .product(name: "PGModel", package: parentPackage),
                // The service, run in-process for the service benchmarks; with it come the layers under
                // it (the wire breakdown encodes and decodes lines itself), imported with
                // `@_spi(PGModelInternals) import`.
                .product(name: "PGModelServer", package: parentPackage),
                // The baseline of the point-fetch benchmark: the same query on the raw driver.
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6), .define("PGMODEL_ASYNC_FORMS")]
        ),
    ]
)
