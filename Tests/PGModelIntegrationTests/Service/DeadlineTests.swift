import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOPosix
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
import PostgresNIO
import Testing
import PGModelTesting

@Model final class DeadlineEntry {
    var title: String
    init(title: String) { self.title = title }
}

/// Every store call has a deadline: a PostgreSQL that stops answering (here: a table locked by another
/// session, so the statement waits) makes the call fail with `timeout` within it — on the direct store,
/// through the service with the client's deadline, and with the server's own — and once the stall ends
/// the next call succeeds.
///
/// The lock takes a transaction id, which holds back history readers across the cluster while it lasts
///, so scripts/test.sh runs this suite alone, with the resilience tests.
@Suite("Deadlines: a stalled PostgreSQL gives timeout, then calls recover")
struct DeadlineTests {
    /// Opens a session of its own that holds an ACCESS EXCLUSIVE lock on `table` until `release()`.
    final class TableLock: Sendable {
        let connection: PostgresConnection

        init(_ qualifiedTable: String) async throws {
            let configuration = try PostgresStoreConfiguration.parse(try TestDatabase.url())
            connection = try await PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration.connection, id: 99,
                logger: Logger(label: "pgmodel.test-lock"))
            _ = try await connection.query(PostgresQuery(unsafeSQL: "BEGIN"), logger: Logger(label: "pgmodel.test-lock"))
            _ = try await connection.query(PostgresQuery(unsafeSQL: "LOCK TABLE \(qualifiedTable) IN ACCESS EXCLUSIVE MODE"),
                                           logger: Logger(label: "pgmodel.test-lock"))
        }

        func release() async throws {
            _ = try await connection.query(PostgresQuery(unsafeSQL: "ROLLBACK"), logger: Logger(label: "pgmodel.test-lock"))
            try await connection.close()
        }
    }

    /// Runs a fetch on a fresh context and returns what it threw (nil if it did not) and how long it took.
    static func timedFetch(_ container: ModelContainer) async throws -> (PGModelError?, Duration) {
        try await offCooperativePool {
            let started = ContinuousClock.now
            do {
                _ = try ModelContext(container).fetch(FetchDescriptor<DeadlineEntry>())
                return (nil, ContinuousClock.now - started)
            } catch let error as PGModelError {
                return (error, ContinuousClock.now - started)
            }
        }
    }

    static func seed(_ container: ModelContainer) async throws {
        try await offCooperativePool {
            let context = ModelContext(container)
            context.insert(DeadlineEntry(title: "kept"))
            try context.save()
        }
    }

    static func count(_ container: ModelContainer) async throws -> Int {
        try await offCooperativePool { try ModelContext(container).fetchCount(FetchDescriptor<DeadlineEntry>()) }
    }

    /// Seeds a row, stalls a fetch behind a lock on the table, and checks it fails with `timeout` after
    /// about a second — the one-second deadline under test, not a longer one — and that the next call,
    /// once the lock is gone, succeeds. Closes the container.
    static func expectTimeoutThenRecovery(_ container: ModelContainer, table: String, _ comment: Comment) async throws {
        try await seed(container)
        let lock = try await TableLock(table)
        // The lock is released whatever the fetch did: PostgresNIO traps on a connection never closed.
        let outcome: Result<(PGModelError?, Duration), any Error>
        do { outcome = .success(try await timedFetch(container)) } catch { outcome = .failure(error) }
        try await lock.release()
        let (error, waited) = try outcome.get()
        #expect(error?.code == .timeout, "\(comment): \(String(describing: error))")
        #expect(waited >= .milliseconds(900) && waited < .seconds(4), "\(comment): \(waited)")
        #expect(try await count(container) == 1, "\(comment): the next call works")
        await container.close()
    }

    @Test("direct store: the URL's requestTimeout bounds a stalled fetch, and the next call works")
    func directStore() async throws {
        let schema = TestDatabase.uniqueSchema("dl")
        let base = try TestDatabase.schemaURL(schema).absoluteString
        let url = try #require(URL(string: base + "&requestTimeout=1"))
        let container = try await offCooperativePool { try ModelContainer(for: DeadlineEntry.self, configurations: ModelConfiguration(url: url)) }
        // The store's own deadline, not the bridge's backstop; a new connection replaces the closed one.
        try await Self.expectTimeoutThenRecovery(container, table: "\"\(schema)\".\"deadline_entry\"", "direct store")
    }

    /// Registers ``DeadlineEntry`` in `schema` and opens a container on the service as `user`.
    static func serviceContainer(schema: String, user: String, port: Int, requestTimeout: Duration?) async throws -> ModelContainer {
        try await ServerTestHarness.register(Schema([DeadlineEntry.self]).schemaDescription, schemaName: schema)
        var configuration = ModelConfiguration(url: try #require(URL(string: "pgmodel://\(user):secret@127.0.0.1:\(port)")))
        configuration.requestTimeout = requestTimeout
        return try await offCooperativePool { [configuration] in
            try ModelContainer(for: DeadlineEntry.self, configurations: configuration)
        }
    }

    @Test("service: the client's requestTimeout bounds a stalled call; the next call reconnects")
    func serviceClientDeadline() async throws {
        let schema = TestDatabase.uniqueSchema("dls")
        let user = try await ServerTestHarness.makeUser("deadline")
        try await ServerTestHarness.withServer(schemaName: schema) { port in
            let container = try await Self.serviceContainer(schema: schema, user: user.name, port: port, requestTimeout: .seconds(1))
            // The client closes the stalled connection; the next call reconnects.
            try await Self.expectTimeoutThenRecovery(container, table: "\"\(schema)\".\"deadline_entry\"", "client deadline")
        }
    }

    /// The server's own deadline is 30 s, the client's 1 s: the client sends its deadline with the
    /// request, so the save stalled behind the lock is abandoned by the server too and never commits —
    /// not when the lock goes, after the client was told `timeout` and moved on.
    @Test("service: a save the client gave up on (timeout) does not commit once the stall ends")
    func abandonedSaveDoesNotCommitLater() async throws {
        let schema = TestDatabase.uniqueSchema("dlx")
        let user = try await ServerTestHarness.makeUser("deadline")
        try await ServerTestHarness.withServer(schemaName: schema) { port in
            let container = try await Self.serviceContainer(schema: schema, user: user.name, port: port, requestTimeout: .seconds(1))
            try await Self.seed(container)
            let table = "\"\(schema)\".\"deadline_entry\""
            let lock = try await TableLock(table)
            let outcome: Result<PGModelError?, any Error>
            do {
                outcome = .success(try await offCooperativePool {
                    let context = ModelContext(container)
                    context.insert(DeadlineEntry(title: "abandoned"))
                    do { try context.save() } catch let error as PGModelError { return error }
                    return nil
                })
            } catch {
                outcome = .failure(error)
            }
            try await lock.release()
            #expect(try outcome.get()?.code == .timeout)
            // The stalled save queued for the table first: once this second lock is granted, it has ended,
            // committed or rolled back.
            let after = try await TableLock(table)
            try await after.release()
            let titles = try await offCooperativePool { try ModelContext(container).fetch(FetchDescriptor<DeadlineEntry>()).map(\.title) }
            #expect(titles == ["kept"], "the abandoned save left nothing")
            await container.close()
        }
    }

    /// A client's `timeoutMs` counts from when the server read the line: the second of two pipelined
    /// saves, queued behind the stalled first until after its own deadline, is answered `timeout`
    /// without being started — it does not get a fresh deadline once the stall ends, and never commits.
    @Test("service: a pipelined save whose deadline passed while it waited is not started")
    func queuedSaveIsNotStartedPastItsDeadline() async throws {
        let schema = TestDatabase.uniqueSchema("dlq")
        let user = try await ServerTestHarness.makeUser("deadline")
        try await ServerTestHarness.withServer(schemaName: schema) { port in
            try await ServerTestHarness.register(Schema([DeadlineEntry.self]).schemaDescription, schemaName: schema)
            let client = try await RawProtocolClient.connect(port: port)
            #expect(try await RawProtocolTests.hello(client, user.name, "secret").ok == true)
            let table = "\"\(schema)\".\"deadline_entry\""
            let lock = try await TableLock(table)
            let answers: Result<(RawResponse, RawResponse), any Error>
            do {
                func save(_ id: Int, _ title: String, timeoutMs: Int) -> String {
                    #"{"id":\#(id),"op":"save","timeoutMs":\#(timeoutMs),"inserts":[{"entity":"DeadlineEntry","id":"\#(UUID.v7().uuidString.lowercased())","values":{"title":"\#(title)"}}]}"#
                }
                try await client.sendLine(save(1, "first", timeoutMs: 800))
                try await client.sendLine(save(2, "queued", timeoutMs: 300))
                let first = try RawResponse(try await client.readLine())
                // The stall ends before the queued save is looked at: started now, it would commit.
                try await lock.release()
                answers = .success((first, try RawResponse(try await client.readLine())))
            } catch {
                try? await lock.release()
                answers = .failure(error)
            }
            let (first, queued) = try answers.get()
            #expect(first.idNumber == 1 && first.code == "timeout", "\(first)")
            #expect(queued.idNumber == 2 && queued.code == "timeout", "\(queued)")
            #expect(queued.message?.contains("not started") == true, "\(queued)")
            // The stalled first save queued for the table before this lock: once it is granted, that save has ended.
            let after = try await TableLock(table)
            try await after.release()
            let count = try await client.request(#"{"id":3,"op":"count","entity":"DeadlineEntry"}"#)
            #expect(count.count == 0, "neither save committed: \(count)")
            await client.close()
        }
    }

    @Test("service: the server answers timeout at its own deadline, and the connection stays usable")
    func serverDeadline() async throws {
        let schema = TestDatabase.uniqueSchema("dlv")
        let user = try await ServerTestHarness.makeUser("deadline")
        try await ServerTestHarness.withRunningServer(schemaName: schema, requestTimeout: .seconds(1)) { _, port in
            let container = try await Self.serviceContainer(schema: schema, user: user.name, port: port, requestTimeout: .seconds(20))
            // The server answers at its 1 s, long before the client's 20 s; its pool replaces the connection.
            try await Self.expectTimeoutThenRecovery(container, table: "\"\(schema)\".\"deadline_entry\"", "server deadline")
        }
    }

    @Test("a requestTimeout option that is not a positive number of seconds is invalid_configuration")
    func invalidOption() async throws {
        for option in ["0", "-1", "soon", "1e9"] {
            let url = try #require(URL(string: try TestDatabase.schemaURL().absoluteString + "&requestTimeout=\(option)"))
            #expect(throws: PGModelError.self) {
                _ = try ModelConfiguration(url: url).effectiveRequestTimeout()
            }
        }
        var configuration = ModelConfiguration(url: try TestDatabase.schemaURL())
        #expect(try configuration.effectiveRequestTimeout() == ModelConfiguration.defaultRequestTimeout)
        configuration.requestTimeout = .milliseconds(250)
        #expect(try configuration.effectiveRequestTimeout() == .milliseconds(250))
    }

    /// How many sessions wait on a lock right now.
    static func sessionsWaitingOnLocks() async throws -> Int {
        let configuration = try PostgresStoreConfiguration.parse(try TestDatabase.url())
        let logger = Logger(label: "pgmodel.test-probe")
        let connection = try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration.connection, id: 98, logger: logger)
        defer { Task { try? await connection.close() } }
        let rows = try await connection.query("SELECT count(*)::int FROM pg_stat_activity WHERE wait_event_type = 'Lock'", logger: logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    /// 200 async fetches at once, all stalled behind a lock: none blocks a thread, so the cooperative pool
    /// (two threads here) still runs other work, and once the lock goes every fetch completes.
    static func expectConcurrentAsyncFetchesKeepThePoolResponsive(_ container: ModelContainer, table: String, _ comment: Comment) async throws {
        try await seed(container)
        let lock = try await TableLock(table)
        let completed = Counter()
        let outcome: Result<[Int], any Error>
        do {
            outcome = .success(try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<200 {
                    group.addTask {
                        let rows = try await ModelContext(container).fetchAsync(FetchDescriptor<DeadlineEntry>())
                        completed.increment()
                        return rows.count
                    }
                }
                // Every fetch is in flight: the database holds some behind the lock, the pool queues the rest.
                let waitedSince = ContinuousClock.now
                while try await sessionsWaitingOnLocks() == 0 {
                    guard ContinuousClock.now - waitedSince < .seconds(20) else { break }
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(try await sessionsWaitingOnLocks() > 0, "\(comment): fetches wait on the lock")
                // The cooperative pool is free: a detached task runs and finishes while all 200 wait.
                let probe = await Task.detached { (1...1000).reduce(0, +) }.value
                #expect(probe == 500_500)
                #expect(completed.value == 0, "\(comment): nothing finished while the table was locked")
                try await lock.release()
                var counts: [Int] = []
                for try await count in group { counts.append(count) }
                return counts
            })
        } catch {
            try? await lock.release()
            outcome = .failure(error)
        }
        let counts = try outcome.get()
        #expect(counts.count == 200, "\(comment)")
        #expect(counts.allSatisfy { $0 == 1 }, "\(comment)")
        await container.close()
    }

    @Test("direct store: 200 concurrent async fetches on a two-thread pool all complete, and the pool stays responsive")
    func concurrentAsyncFetchesDirect() async throws {
        let schema = TestDatabase.uniqueSchema("dla")
        let url = try TestDatabase.schemaURL(schema)
        let container = try await offCooperativePool { try ModelContainer(for: DeadlineEntry.self, configurations: ModelConfiguration(url: url)) }
        try await Self.expectConcurrentAsyncFetchesKeepThePoolResponsive(container, table: "\"\(schema)\".\"deadline_entry\"", "direct store")
    }

    @Test("service: 200 concurrent async fetches on a two-thread pool all complete, and the pool stays responsive")
    func concurrentAsyncFetchesService() async throws {
        let schema = TestDatabase.uniqueSchema("dlb")
        let user = try await ServerTestHarness.makeUser("deadline")
        try await ServerTestHarness.withServer(schemaName: schema) { port in
            let container = try await Self.serviceContainer(schema: schema, user: user.name, port: port, requestTimeout: nil)
            try await Self.expectConcurrentAsyncFetchesKeepThePoolResponsive(container, table: "\"\(schema)\".\"deadline_entry\"", "service")
        }
    }
}

/// A thread-safe counter.
final class Counter: Sendable {
    private let count = NIOLockedValueBox(0)
    func increment() { count.withLockedValue { $0 += 1 } }
    var value: Int { count.withLockedValue { $0 } }
}
