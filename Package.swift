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
        // Tests of apps that use PGModel: a private PostgreSQL, a running service and a store of either
        // kind in one call each.
        .library(name: "PGModelTesting", targets: ["PGModelTesting"]),
        // The layers below are no products of their own. Their declarations are
        // `@_spi(PGModelInternals) public`: other modules of this package, Benchmarks/ and Fuzz/ import
        // them with `@_spi(PGModelInternals) import`; an app never sees them.
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swiftlang/swift-syntax.git", from: "603.0.1"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // Only the TripsAPI example and its tests use Hummingbird; PGModel's own modules never import it.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
    ],
    targets: [
        // The model of requests: schema description, query IR, values, errors, the store protocol.
        // Foundation only.
        .target(name: "PGModelCore"),
        // SQL rendering: IR -> parameterized PostgreSQL, DDL, row-level security. Pure.
        .target(name: "PGModelSQL", dependencies: ["PGModelCore"]),
        // What the client, the server and the database layer share to run on SwiftNIO: the event-loop
        // executor, deadlines and their timer, TLS files and failures, connection-failure words.
        .target(
            name: "PGModelIO",
            dependencies: [
                "PGModelCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // Everything that speaks PostgreSQL: the engine, the gateway, the pool, the schema registry, the
        // change listener, migrations, the ephemeral cluster, the direct store.
        .target(
            name: "PGModelPostgres",
            dependencies: [
                "PGModelCore", "PGModelSQL", "PGModelIO",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // The line protocol's wire format: messages, codecs, framing. No sockets, no sessions.
        .target(
            name: "PGModelWire",
            dependencies: ["PGModelCore", .product(name: "NIOCore", package: "swift-nio")]
        ),
        // The service client (pgmodel:// and pgmodels://): one connection, its state machine, pending
        // requests, change signals. No PostgreSQL driver.
        .target(
            name: "PGModelClient",
            dependencies: [
                "PGModelCore", "PGModelWire", "PGModelIO",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            ]
        ),
        // The TCP service: listener, connections, the session and its state machines, the dispatcher.
        .target(
            name: "PGModelServer",
            dependencies: [
                "PGModelWire", "PGModelPostgres", "PGModelSQL", "PGModelCore", "PGModelIO",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
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
        // What applications import: the SwiftData API, over either store (PGModelPostgres, PGModelClient).
        .target(
            name: "PGModel",
            dependencies: [
                "PGModelCore", "PGModelIO", "PGModelPostgres", "PGModelClient", "PGModelMacros",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                // ModelContainerService: a container's lifetime as a service of a server's ServiceGroup.
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "pgmodel",
            dependencies: [
                "PGModel", "PGModelServer", "PGModelPostgres", "PGModelClient", "PGModelWire", "PGModelIO", "PGModelCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // What tests import: a private PostgreSQL cluster and an in-process service on port 0.
        .target(
            name: "PGModelTesting",
            dependencies: [
                "PGModel", "PGModelServer", "PGModelPostgres", "PGModelIO", "PGModelCore",
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
        // examples/TripsAPI: a Hummingbird HTTP API over PGModel, built with the package so CI compiles
        // PGModel once and runs its tests over real HTTP (TripsAPIExampleTests); the example's own
        // Package.swift builds the same files for a user. The app's code is a library so the tests can
        // start it; the executable is only its entry point.
        .target(
            name: "TripsAPI",
            dependencies: [
                "PGModel",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "examples/TripsAPI/Sources/TripsAPI"
        ),
        .executableTarget(
            name: "TripsAPIExample",
            dependencies: ["TripsAPI", .product(name: "Hummingbird", package: "hummingbird")],
            path: "examples/TripsAPI/Sources/TripsAPIServer"
        ),

        // Unit tests, one target per module: no database.
        // Fixtures the unit tests share: the graph schema description and the wire helpers.
        .target(
            name: "PGModelTestSupport",
            dependencies: ["PGModelCore", "PGModelWire", .product(name: "NIOCore", package: "swift-nio")],
            path: "Tests/PGModelTestSupport"
        ),
        .testTarget(name: "PGModelCoreTests", dependencies: ["PGModelCore", "PGModelTestSupport"]),
        .testTarget(name: "PGModelSQLTests", dependencies: ["PGModelSQL", "PGModelCore", "PGModelTestSupport"]),
        .testTarget(
            name: "PGModelIOTests",
            dependencies: ["PGModelIO", "PGModelCore", .product(name: "NIOCore", package: "swift-nio")]
        ),
        .testTarget(
            name: "PGModelPostgresTests",
            dependencies: [
                "PGModelPostgres", "PGModelSQL", "PGModelIO", "PGModelCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        .testTarget(
            name: "PGModelWireTests",
            dependencies: [
                "PGModelWire", "PGModelCore", "PGModelTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "PGModelClientTests",
            dependencies: [
                "PGModelClient", "PGModelWire", "PGModelIO", "PGModelCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "PGModelServerTests",
            dependencies: [
                "PGModelServer", "PGModelWire", "PGModelSQL", "PGModelCore", "PGModelTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
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
                "PGModel", "PGModelClient", "PGModelIO", "PGModelPostgres", "PGModelCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        // SwiftData code exactly as Apple's documentation and sessions write it, with `import PGModel`:
        // compiled by every build of the tests, never run. A file per topic.
        .testTarget(name: "SwiftDataSnippets", dependencies: ["PGModel"], exclude: ["README.md"]),
        // Integration tests: a real PostgreSQL (scripts/test.sh starts it) and real TCP connections.
        .testTarget(
            name: "PGModelIntegrationTests",
            dependencies: [
                "PGModel", "PGModelTesting", "PGModelTestSupport", "PGModelClient", "PGModelIO", "PGModelServer", "PGModelPostgres", "PGModelWire", "PGModelCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        // TripsAPI's routes over real HTTP (HummingbirdTesting's .live server on a port) against a real
        // PostgreSQL: scripts/test.sh runs them in the integration phase.
        .testTarget(
            name: "TripsAPIExampleTests",
            dependencies: [
                "TripsAPI", "PGModel", "PGModelTesting",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "examples/TripsAPI/Tests/TripsAPITests"
        ),
    ]
)
