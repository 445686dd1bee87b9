// swift-tools-version:6.0
// The TripsAPI example as a package of its own: a Hummingbird 2 HTTP JSON API over PGModel.
//
//   TRIPSAPI_STORE=postgres://pgmodel:pgmodel@127.0.0.1:55432/pgmodel swift run TripsAPIExample
//   curl -s localhost:8080/trips
//
// It depends on PGModel by path, as an app inside this checkout would; elsewhere, name PGModel's
// repository URL instead (README, "A five-minute tour", shows the Package.swift). The main package
// builds the same sources (targets TripsAPI, TripsAPIExample and TripsAPIExampleTests), which is what CI
// compiles and tests.
import PackageDescription

let package = Package(
    name: "TripsAPI",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "PGModel", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        .target(
            name: "TripsAPI",
            dependencies: [
                .product(name: "PGModel", package: "PGModel"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "TripsAPIExample",
            dependencies: ["TripsAPI", .product(name: "Hummingbird", package: "hummingbird")],
            path: "Sources/TripsAPIServer"
        ),
        .testTarget(
            name: "TripsAPIExampleTests",
            dependencies: [
                "TripsAPI",
                .product(name: "PGModel", package: "PGModel"),
                .product(name: "PGModelTesting", package: "PGModel"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Tests/TripsAPITests"
        ),
    ]
)
