import Foundation
import Logging
import NIOPosix
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
import PGModelTesting
import PostgresNIO
import Testing

/// `pgmodel serve --replica`: a client carries its newest commit (`readAfter`) to a new connection, so it
/// reads its own save there even while the standby lags.
@Suite("Replicas: the service reads on a standby after the client's own commit", .serialized,
       .enabled(if: Standby.isAvailable, "needs pg_basebackup and PGMODEL_TEST_DATABASE_URL"))
struct ReplicaServiceTests {
    static let logger: Logger = {
        var logger = Logger(label: "pgmodel.test.replicas")
        logger.logLevel = .error
        return logger
    }()

    /// Waits until the standby has replayed everything the primary has written so far.
    static func catchUp(_ standby: Standby) async throws {
        let primary = try PostgresStoreConfiguration.parse(TestDatabase.url())
        let target = try await query(primary, "SELECT pg_current_wal_insert_lsn()::text")
        var replica = primary
        replica.port = standby.port
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let replayed = try await query(replica, "SELECT pg_last_wal_replay_lsn()::text")
            if let replayed = LogSequenceNumber(replayed), let target = LogSequenceNumber(target), replayed >= target { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw PGModelError(.timeout, "the standby did not catch up")
    }

    static func query(_ configuration: PostgresStoreConfiguration, _ sql: String) async throws -> String {
        let connection = try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(),
                                                              configuration: configuration.connection, id: 1, logger: logger)
        do {
            var value = ""
            for try await text in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode(String.self) { value = text }
            try await connection.close()
            return value
        } catch {
            try? await connection.close()
            throw error
        }
    }

    @Test("a client saves, then reads on a new connection while the standby lags: its readAfter sends the read to the primary")
    func readAfterAcrossConnections() async throws {
        let entity = ServerTestHarness.uniqueEntity("Note")
        let schema = ServerRemoteStoreTests.schema(entity)
        try await Standby.with { standby in
            let schemaName = TestDatabase.uniqueSchema("rps")
            try await ServerTestHarness.register(schema, schemaName: schemaName)
            let user = try await ServerTestHarness.makeUser("rep")
            try await Self.catchUp(standby)
            let primary = try TestDatabase.url()
            let replicaURL = primary.replacingOccurrences(of: ":\(try PostgresStoreConfiguration.parse(primary).port)/", with: ":\(standby.port)/")
            try await ServerTestHarness.withServer(schemaName: schemaName, configure: { $0.replicaURLs = [replicaURL] }) { port in
                let first = try RemoteModelStore(url: try ServerRemoteStoreTests.url(user, port: port))
                try await first.prepare(schema)
                try await standby.pause()
                do {
                    let id = UUID.v7()
                    let saved = try await first.save(SaveRequest(inserts: [RowValues(entity: entity, id: id, values: ["code": .string("lagging"), "rank": .int(1)])]))
                    let position = try #require(saved.commitLSN, "the save answer carries commitLSN")
                    #expect(first.readAfter == position)
                    // The same connection reads its save (the server remembers the connection's commit).
                    #expect(try await first.fetch(FetchRequest(entity: entity)).map(\.id).contains(id))
                    await first.close()

                    // A new connection that knows nothing of the save reads the lagging standby: the row is not there yet.
                    let stranger = try RemoteModelStore(url: try ServerRemoteStoreTests.url(user, port: port))
                    try await stranger.prepare(schema)
                    #expect(try await !stranger.fetch(FetchRequest(entity: entity)).map(\.id).contains(id),
                            "without readAfter the read went to the paused standby")
                    await stranger.close()

                    // A new connection carrying the client's newest commit reads its save.
                    let second = try RemoteModelStore(url: try ServerRemoteStoreTests.url(user, port: port))
                    second.readAfter(atLeast: position)
                    try await second.prepare(schema)
                    #expect(try await second.fetch(FetchRequest(entity: entity)).map(\.id).contains(id))
                    #expect(try await second.count(FetchRequest(entity: entity)) == 1)
                    await second.close()
                    try await standby.resume()
                } catch {
                    try? await standby.resume()
                    throw error
                }
            }
        }
    }
}
