// swift-tools-version:6.0
// The seed's SampleTrips as a command-line app, on either store:
//
//   SAMPLETRIPS_STORE=postgres://pgmodel:pgmodel@127.0.0.1:55432/pgmodel swift run SampleTrips
//   SAMPLETRIPS_STORE=pgmodel://alice:secret@127.0.0.1:7432 swift run SampleTrips
//
// It depends on PGModel by path, as an app inside this checkout would; elsewhere, name PGModel's
// repository URL instead (README, "A five-minute tour", shows the Package.swift).
import PackageDescription

let package = Package(
    name: "SampleTrips",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "PGModel", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "SampleTrips",
            dependencies: [.product(name: "PGModel", package: "PGModel")]
        ),
    ]
)
