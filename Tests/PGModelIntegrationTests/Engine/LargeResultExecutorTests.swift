import Foundation
import Logging
import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
import PostgresNIO
import Testing

/// The service runs short requests on their connection's event loop and sets
/// `PostgresStoreEngine.largeResultExecutor`, so a large result is decoded where it delays no other
/// connection's I/O. These check that the engine honours it, for rows and for identifiers,
/// and leaves small results where the fetch runs.
@Suite("Large results decoded on the executor the service names")
struct LargeResultExecutorTests {
    /// Runs each job on a queue of its own and counts them.
    final class CountingExecutor: TaskExecutor, @unchecked Sendable {
        // @unchecked: `jobs` is behind its lock; the queue is thread-safe.
        private let queue = DispatchQueue(label: "pgmodel.test.large-results")
        private let counter = NIOLockedValueBox(0)
        var jobs: Int { counter.withLockedValue { $0 } }

        func enqueue(_ job: consuming ExecutorJob) {
            counter.withLockedValue { $0 += 1 }
            let job = UnownedJob(job)
            queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }

    static let schema = SchemaDescription(entities: [
        EntityDescription(name: "Reading", attributes: [AttributeDescription(name: "rank", type: .int64)]),
    ])

    @Test("rows and identifiers of 257 or more leave for the executor; fewer stay; both decode the same")
    func largeResultsLeave() async throws {
        var logger = Logger(label: "pgmodel.test.large-results")
        logger.logLevel = .warning
        try await EngineTestStore.with(Self.schema, prefix: "lr", logger: logger) { engine, connection, _ in
            let count = PostgresStoreEngine.largeResultRows + 20
            let inserts = (0..<count).map { RowValues(entity: "Reading", id: UUID(), values: ["rank": .int(Int64($0))]) }
            _ = try await engine.save(SaveRequest(inserts: inserts), in: Self.schema, as: .trusted, on: connection)
            let executor = CountingExecutor()
            let all = FetchRequest(entity: "Reading", sort: [SortKey("rank")])
            let few = FetchRequest(entity: "Reading", sort: [SortKey("rank")], limit: 10)

            let offloading = connection.with(budget: RequestBudget(largeResultExecutor: executor))
            let small = try await engine.fetchTable(few, in: Self.schema, as: .trusted, on: offloading)
            let smallIDs = try await engine.fetchIdentifiers(few, in: Self.schema, as: .trusted, on: offloading)
            let jobsAfterSmall = executor.jobs
            #expect(small.rows.count == 10)
            #expect(smallIDs.count == 10)
            #expect(jobsAfterSmall == 0)

            let large = try await engine.fetchTable(all, in: Self.schema, as: .trusted, on: offloading)
            let jobsAfterRows = executor.jobs
            #expect(jobsAfterRows > 0)
            let largeIDs = try await engine.fetchIdentifiers(all, in: Self.schema, as: .trusted, on: offloading)
            #expect(executor.jobs > jobsAfterRows)

            // The same rows as without the executor, in order.
            let plain = try await engine.fetchTable(all, in: Self.schema, as: .trusted, on: connection)
            #expect(large.rows.count == count)
            #expect(large.rows.map(\.id) == plain.rows.map(\.id))
            #expect(large.rows.map(\.values) == plain.rows.map(\.values))
            #expect(largeIDs.map(\.id) == plain.rows.map(\.id))
        }
    }
}
