// swift-tools-version:6.0
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "PGModel",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "PGModel", targets: ["PGModel"]),
        .library(name: "PGModelServer", targets: ["PGModelServer"]),
        .executable(name: "pgmodel", targets: ["pgmodel"]),
        // Tests of apps that use PGModel: a private PostgreSQL and a running service in one call each.
        .library(name: "PGModelTesting", targets: ["PGModelTesting"]),
        // The layers below the stores, for the fuzz harness in Fuzz/ (its own package, like Benchmarks/).
        .library(name: "PGModelCore", targets: ["PGModelCore"]),
        .library(name: "PGModelSQL", targets: ["PGModelSQL"]),
        .library(name: "PGModelWire", targets: ["PGModelWire"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swiftlang/swift-syntax.git", from: "603.0.1"),
    ],
    targets: [
        // Layer 0: schema description, Query IR, values, errors. Foundation only.
        .target(name: "PGModelCore"),
        // Layer 1: IR -> parameterized PostgreSQL, DDL. Pure.
        .target(name: "PGModelSQL", dependencies: ["PGModelCore"]),
        // Layer 2: executes rendered SQL on PostgresNIO.
        .target(
            name: "PGModelPostgres",
            dependencies: [
                "PGModelCore", "PGModelSQL",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Layer 2: line-protocol messages and framing. No sockets in the codec.
        .target(
            name: "PGModelWire",
            dependencies: ["PGModelCore", .product(name: "NIOCore", package: "swift-nio")]
        ),
        // Layer 3: the TCP service.
        .target(
            name: "PGModelServer",
            dependencies: [
                "PGModelStore", "PGModelWire", "PGModelPostgres", "PGModelSQL", "PGModelCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Layer 3: the store layer. Every thread, socket, pool, reconnect policy and deadline between the
        // SwiftData API and PostgreSQL: the direct store, the service client, the blocking bridge.
        .target(
            name: "PGModelStore",
            dependencies: [
                "PGModelCore", "PGModelPostgres", "PGModelWire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .macro(
            name: "PGModelMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]
        ),
        // What applications import: the SwiftData API. It reaches the stores only through PGModelStore.
        .target(
            name: "PGModel",
            dependencies: [
                "PGModelCore", "PGModelStore", "PGModelMacros",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "pgmodel",
            dependencies: [
                "PGModel", "PGModelStore", "PGModelServer", "PGModelPostgres", "PGModelCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // What tests import: a private PostgreSQL cluster and an in-process service on port 0.
        .target(
            name: "PGModelTesting",
            dependencies: [
                "PGModel", "PGModelStore", "PGModelServer", "PGModelPostgres", "PGModelCore",
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // examples/SampleTrips's sources, built with the package so CI runs them (ExamplesTests); the
        // example's own Package.swift builds the same files for a user.
        .executableTarget(
            name: "SampleTripsExample",
            dependencies: ["PGModel"],
            path: "examples/SampleTrips/Sources/SampleTrips"
        ),

        // Unit tests: no database.
        .testTarget(name: "PGModelSQLTests", dependencies: ["PGModelSQL", "PGModelCore"]),
        .testTarget(
            name: "PGModelWireTests",
            dependencies: [
                "PGModelWire", "PGModelSQL", "PGModelCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            // Inputs the fuzz harness found or started from, replayed by FuzzCorpusTests.
            resources: [.copy("FuzzCorpus")]
        ),
        .testTarget(
            name: "PGModelMacrosTests",
            dependencies: [
                "PGModelMacros",
                .product(name: "SwiftSyntaxMacrosTestSupport", package: "swift-syntax"),
            ]
        ),
        .testTarget(
            name: "PGModelTests",
            dependencies: [
                "PGModel", "PGModelStore", "PGModelSQL", "PGModelPostgres", "PGModelWire", "PGModelCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        // Integration tests: a real PostgreSQL (scripts/test.sh starts it) and real TCP connections.
        .testTarget(
            name: "PGModelIntegrationTests",
            dependencies: [
                "PGModel", "PGModelTesting", "PGModelStore", "PGModelServer", "PGModelPostgres", "PGModelWire", "PGModelCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ]
)
