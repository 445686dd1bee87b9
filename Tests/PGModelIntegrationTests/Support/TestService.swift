import Foundation
@_spi(PGModelInternals) import PGModel
import PGModelTesting

/// The in-process services the behaviour suite shares, each a PGModelTesting service on 127.0.0.1 and
/// an ephemeral port with a PostgreSQL schema of its own, started on first use and left running until the
/// test process exits. Each test logs in as a fresh user, so tests are isolated by ownership.
actor TestService {
    private static let instance = TestService()
    /// A second server with a schema of its own, for model sets whose entity names clash with the
    /// behaviour suite's (the seed ports' `Trip` hierarchy versus the README tour's `Trip`).
    private static let seedInstance = TestService()
    /// A third, for the migration tests: their versions of `Trip` and `Note` change the tables.
    private static let migrationInstance = TestService()
    /// A fourth, for examples/: the SampleTrips app and the Python client share its `Trip` tables.
    private static let examplesInstance = TestService()

    /// The start-up, shared by every caller: actor methods are reentrant across `await`, so a plain
    /// "not started yet" check would let concurrent first callers start several servers.
    private var starting: Task<PGModelTestService, any Error>?

    static func shared() async throws -> TestService { try await instance.started() }
    static func seeds() async throws -> TestService { try await seedInstance.started() }
    static func migrations() async throws -> TestService { try await migrationInstance.started() }
    static func examples() async throws -> TestService { try await examplesInstance.started() }

    private func started() async throws -> TestService {
        _ = try await service()
        return self
    }

    /// The running service.
    func service() async throws -> PGModelTestService {
        let task = starting ?? Task {
            try await PGModelTestService.start(schemaName: PGModelTestDatabase.uniqueSchemaName("svc"))
        }
        starting = task
        return try await task.value
    }

    /// Registers `schema` as an admin: only admins create tables, users register what exists.
    func register(_ schema: Schema) async throws {
        try await service().register(schema)
    }

    /// A `pgmodel://` URL of a newly created user.
    func newUserURL(admin: Bool = false) async throws -> URL {
        try await service().makeUser(admin ? "admin" : "behavior", isAdmin: admin)
    }
}
