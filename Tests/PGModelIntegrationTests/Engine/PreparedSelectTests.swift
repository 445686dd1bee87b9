import Foundation
import Logging
import NIOPosix
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelPostgres
import PostgresNIO
import Testing
import PGModelTesting

@Model final class PreparedNote {
    var title: String
    init(title: String) { self.title = title }
}

/// A fetch runs as a named prepared statement (parsed once per connection). These are the ways such a
/// statement can go stale under a running store; each must cost at most one failed call, never a
/// connection that keeps failing.
@Suite("Prepared selects survive DDL under a running store")
struct PreparedSelectTests {
    /// Runs `sql` as the database owner, outside PGModel.
    static func run(_ sql: String) async throws {
        let configuration = try PostgresStoreConfiguration.parse(try TestDatabase.url())
        let logger = Logger(label: "pgmodel.test-ddl")
        let connection = try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration.connection, id: 97, logger: logger)
        let outcome: Result<Void, any Error>
        do { _ = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger); outcome = .success(()) } catch { outcome = .failure(error) }
        try await connection.close()
        try outcome.get()
    }

    static func container(_ schema: String) async throws -> ModelContainer {
        let url = try TestDatabase.schemaURL(schema)
        return try await offCooperativePool { try ModelContainer(for: PreparedNote.self, configurations: ModelConfiguration(url: url)) }
    }

    /// The titles a fresh context fetches, or the error code it threw. With a `fetchLimit`: only a fetch
    /// that can return few rows runs as a named statement (`PostgresStoreEngine.expectsFewRows`).
    static func titles(_ container: ModelContainer) async throws -> Result<[String], PGModelError> {
        try await offCooperativePool {
            do {
                var descriptor = FetchDescriptor<PreparedNote>(sortBy: [SortDescriptor(\.title)])
                descriptor.fetchLimit = 100
                return .success(try ModelContext(container).fetch(descriptor).map(\.title))
            } catch let error as PGModelError {
                return .failure(error)
            } catch {
                return .failure(PGModelError(.internalError, "\(error)"))
            }
        }
    }

    @Test("a column's type changed under prepared fetches: at most one call fails (0A000), then fetches work")
    func columnTypeChange() async throws {
        let schema = TestDatabase.uniqueSchema("pst")
        let container = try await Self.container(schema)
        try await offCooperativePool {
            let context = ModelContext(container)
            context.insert(PreparedNote(title: "a"))
            context.insert(PreparedNote(title: "b"))
            try context.save()
        }
        #expect(try await Self.titles(container).get() == ["a", "b"])
        #expect(try await Self.titles(container).get() == ["a", "b"])
        // The fetch's plan is cached on its connection; its result type changes under it.
        try await Self.run(#"ALTER TABLE "\#(schema)"."prepared_note" ALTER COLUMN "title" TYPE varchar(200)"#)
        let first = try await Self.titles(container)
        if case .failure(let error) = first { #expect(error.sqlState == "0A000", "\(error)") }
        #expect(try await Self.titles(container).get() == ["a", "b"], "the connection with the stale plan was replaced")
        #expect(try await Self.titles(container).get() == ["a", "b"])
        await container.close()
    }

    @Test("a fetch whose preparation failed (no table yet) works once the table exists: the failed connection is not reused")
    func failedPreparationIsNotKept() async throws {
        let schema = TestDatabase.uniqueSchema("psp")
        let container = try await Self.container(schema)
        try await Self.run(#"DROP TABLE "\#(schema)"."prepared_note" CASCADE"#)
        let missing = try await Self.titles(container)
        guard case .failure(let error) = missing else {
            Issue.record("a fetch of a dropped table succeeded: \(missing)")
            return
        }
        #expect(error.sqlState == "42P01", "\(error)")
        // A second container of the same schema registers it again, creating the table.
        let again = try await Self.container(schema)
        await again.close()
        // PostgresNIO keeps a failed preparation on its connection for good: that one was closed.
        #expect(try await Self.titles(container).get() == [])
        #expect(try await Self.titles(container).get() == [])
        await container.close()
    }
}
