import Foundation
import Logging
import PGModel
import PGModelServer
import PGModelTesting
import ServiceLifecycle

/// One in-process LineServer shared by the service variants of the behaviour suite: started on first
/// use on 127.0.0.1 and an ephemeral port, with its own PostgreSQL schema, and left running until the
/// test process exits. Each test logs in as a fresh user, so tests are isolated by ownership.
actor TestService {
    private static let instance = TestService()
    /// A second server with a schema of its own, for model sets whose entity names clash with the
    /// behaviour suite's (the seed ports' `Trip` hierarchy versus the README tour's `Trip`).
    private static let seedInstance = TestService()
    /// The start-up, shared by every caller: actor methods are reentrant across `await`, so a plain
    /// "port == nil" check would let concurrent first callers start several servers.
    private var starting: Task<Int, any Error>?
    private var port: Int?

    static func shared() async throws -> TestService {
        try await instance.start()
        return instance
    }

    /// A third, for the migration tests: their versions of `Trip` and `Note` change the tables.
    private static let migrationInstance = TestService()

    static func migrations() async throws -> TestService {
        try await migrationInstance.start()
        return migrationInstance
    }

    /// A fourth, for examples/: the SampleTrips app and the Python client share its `Trip` tables.
    private static let examplesInstance = TestService()

    static func examples() async throws -> TestService {
        try await examplesInstance.start()
        return examplesInstance
    }

    static func seeds() async throws -> TestService {
        try await seedInstance.start()
        return seedInstance
    }

    private func start() async throws {
        if port != nil { return }
        let task = starting ?? Task {
            // PGModelTesting's service: what an app's own tests would use.
            try await PGModelTestService.start(schemaName: TestDatabase.uniqueSchema("svc")).port
        }
        starting = task
        port = try await task.value
    }

    private var adminURL: URL?

    /// Registers `schema` as an admin: only admins create tables, users register what exists.
    func register(_ schema: Schema) async throws {
        let url: URL
        if let adminURL { url = adminURL } else {
            url = try await newUserURL(admin: true)
            adminURL = url
        }
        _ = try await offCooperativePool { try ModelContainer(for: schema, configurations: ModelConfiguration(url: url)) }
    }

    /// A `pgmodel://` URL of a newly created user.
    func newUserURL(admin: Bool = false) async throws -> URL {
        guard let port else { throw PGModelError(.connectionFailed, "the test service is not running") }
        let user = try await ServerTestHarness.makeUser(admin ? "admin" : "behavior", admin: admin)
        guard let url = URL(string: "pgmodel://\(user.name):secret@127.0.0.1:\(port)") else {
            throw PGModelError(.invalidConfiguration, "could not form the test service URL")
        }
        return url
    }
}

extension StoreKind {
    /// The stores the behaviour suite runs against.
    static let tested: [StoreKind] = StoreKind.allCases
    /// Stores whose history feeds observers.
    static let observed: [StoreKind] = StoreKind.allCases
}
