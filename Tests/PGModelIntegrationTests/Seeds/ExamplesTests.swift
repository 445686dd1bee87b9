import Foundation
@_spi(PGModelInternals) import PGModel
import Testing
import PGModelTesting

/// examples/ runs here so it cannot rot: the SampleTrips app on both stores (its sources are the package's
/// `SampleTripsExample` target) and the standard-library Python client against a real service.
@Suite("Examples")
struct ExamplesTests {
    /// Runs `executable` with `arguments` and `environment` added to this process's; the password-bearing
    /// URLs travel in the environment, as the examples ask.
    static func run(_ executable: URL, _ arguments: [String] = [], environment: [String: String] = [:],
                    replacingEnvironment: [String: String]? = nil,
                    input: String? = nil, directory: URL? = nil) async throws -> (status: Int32, output: String, error: String) {
        let process = Process()
        process.executableURL = executable
        if let directory { process.currentDirectoryURL = directory }
        process.arguments = arguments
        process.environment = (replacingEnvironment ?? ProcessInfo.processInfo.environment).merging(environment) { $1 }
        let output = Pipe(), error = Pipe(), stdin = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        // Both pipes are drained at once: read one after the other, a process that fills the second
        // pipe's buffer (a long progress log on stderr) would wait forever for a reader.
        async let errorData = offCooperativePool { error.fileHandleForReading.readDataToEndOfFile() }
        let out = try await offCooperativePool { output.fileHandleForReading.readDataToEndOfFile() }
        let err = try await errorData
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    static func sampleTrips() throws -> URL {
        let pgmodel = try ShareCommandTests.executable()
        let binary = pgmodel.deletingLastPathComponent().appendingPathComponent("SampleTripsExample")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw PGModelError(.invalidConfiguration, "SampleTripsExample is not built next to pgmodel (swift build --build-tests builds it)")
        }
        return binary
    }

    static func examplesDirectory() -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("examples")
    }

    /// What one SampleTrips run prints when every step worked.
    static func expectCompleteRun(_ result: (status: Int32, output: String, error: String), scheme: String) {
        #expect(result.status == 0, "SampleTrips failed: \(result.error)")
        #expect(result.output.contains("store: \(scheme)"))
        #expect(result.output.contains("trips: WWDC (BusinessTrip), Grandma (PersonalTrip), Fjords (PersonalTrip)"))
        #expect(result.output.contains("business trips: 1"))
        #expect(result.output.contains("Oslo bucket list: Ferry to Nesodden, Vigeland park"))
        #expect(result.output.contains("Oslo stay: Grandma's"))
        #expect(result.output.contains("WWDC perdiem: 175.0"))
        #expect(result.output.contains("history: 6 inserts, 1 updates, 1 deletes"))
    }

    @Test("SampleTrips runs on the direct store, twice on one schema")
    func sampleTripsDirect() async throws {
        let url = try TestDatabase.schemaURL(TestDatabase.uniqueSchema("ex"))
        for _ in 0..<2 {
            let result = try await Self.run(try Self.sampleTrips(), environment: ["SAMPLETRIPS_STORE": url.absoluteString])
            Self.expectCompleteRun(result, scheme: "postgres")
        }
    }

    @Test("SampleTrips runs in memory with no database named and no server started")
    func sampleTripsInMemory() async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["DATABASE_URL"] = nil
        environment["SAMPLETRIPS_STORE"] = nil
        let result = try await Self.run(try Self.sampleTrips(), replacingEnvironment: environment)
        Self.expectCompleteRun(result, scheme: "in-memory")
    }

    @Test("SampleTrips runs through the service: an admin's run creates the tables, a user's run uses them")
    func sampleTripsService() async throws {
        let service = try await TestService.examples()
        let admin = try await service.newUserURL(admin: true)
        Self.expectCompleteRun(try await Self.run(try Self.sampleTrips(), environment: ["SAMPLETRIPS_STORE": admin.absoluteString]),
                               scheme: "pgmodel")
        let user = try await service.newUserURL()
        Self.expectCompleteRun(try await Self.run(try Self.sampleTrips(), environment: ["SAMPLETRIPS_STORE": user.absoluteString]),
                               scheme: "pgmodel")
    }

    @Test("the Python client logs in, saves, fetches, subscribes and catches up, speaking only PROTOCOL.md")
    func pythonClient() async throws {
        let service = try await TestService.examples()
        // The tables exist because an admin's app registered them; the Python client registers nothing.
        let admin = try await service.newUserURL(admin: true)
        let setup = try await Self.run(try Self.sampleTrips(), environment: ["SAMPLETRIPS_STORE": admin.absoluteString])
        #expect(setup.status == 0, "SampleTrips (admin) failed: \(setup.error)")
        let user = try await service.newUserURL()
        let name = try #require(user.user), port = try #require(user.port)
        let script = Self.examplesDirectory().appendingPathComponent("python/trips.py")
        let result = try await Self.run(URL(fileURLWithPath: "/usr/bin/env"),
                                        ["python3", script.path, "--host", "127.0.0.1", "--port", "\(port)", "--user", name, "--password-stdin"],
                                        environment: [:], input: "secret\n")
        #expect(result.status == 0, "trips.py failed: \(result.error)")
        #expect(result.output.contains("saved: 2 trips"))
        #expect(result.output.contains("fetched: Porto (BusinessTrip), Lisbon (Trip)"))
        #expect(result.output.contains("history: 1 new transactions, inserts of BusinessTrip, Trip"))
        #expect(result.output.contains("history: delete, update"))
        #expect(result.output.hasSuffix("done\n"))
    }
}
