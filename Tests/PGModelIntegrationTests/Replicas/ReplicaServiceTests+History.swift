import Foundation
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelPostgres
import PGModelTesting
import Testing

extension ReplicaServiceTests {
    @Test("service history with the standby lagging: every connection's history has the save, its own and a stranger's")
    func historyWhileLagging() async throws {
        let entity = ServerTestHarness.uniqueEntity("Note")
        let schema = ServerRemoteStoreTests.schema(entity)
        try await Standby.with { standby in
            let schemaName = TestDatabase.uniqueSchema("rph")
            try await ServerTestHarness.register(schema, schemaName: schemaName)
            let user = try await ServerTestHarness.makeUser("reph")
            try await Self.catchUp(standby)
            let primary = try TestDatabase.url()
            let replicaURL = primary.replacingOccurrences(of: ":\(try PostgresStoreConfiguration.parse(primary).port)/", with: ":\(standby.port)/")
            try await ServerTestHarness.withServer(schemaName: schemaName, configure: { $0.replicaURLs = [replicaURL] }) { port in
                let first = try RemoteModelStore(url: try ServerRemoteStoreTests.url(user, port: port))
                try await first.prepare(schema)
                let early = UUID.v7()
                _ = try await first.save(SaveRequest(inserts: [RowValues(entity: entity, id: early, values: ["code": .string("early"), "rank": .int(1)])]))
                try await standby.pause()
                do {
                    let id = UUID.v7()
                    let saved = try await first.save(SaveRequest(inserts: [RowValues(entity: entity, id: id, values: ["code": .string("lagging"), "rank": .int(2)])]))
                    let position = try #require(saved.commitLSN)
                    let own = try await first.fetchHistory(HistoryRequest())
                    #expect(Set(own.transactions.flatMap { $0.changes.map(\.id) }) == [early, id], "the saving connection's history has its save")
                    await first.close()

                    // A connection carrying the commit, and one that knows nothing of it: history is read up to
                    // the primary's horizon either way, so neither page can miss the save.
                    let second = try RemoteModelStore(url: try ServerRemoteStoreTests.url(user, port: port))
                    second.readAfter(atLeast: position)
                    try await second.prepare(schema)
                    let carried = try await second.fetchHistory(HistoryRequest())
                    #expect(Set(carried.transactions.flatMap { $0.changes.map(\.id) }) == [early, id])
                    await second.close()
                    let stranger = try RemoteModelStore(url: try ServerRemoteStoreTests.url(user, port: port))
                    try await stranger.prepare(schema)
                    let page = try await stranger.fetchHistory(HistoryRequest())
                    #expect(Set(page.transactions.flatMap { $0.changes.map(\.id) }) == [early, id],
                            "history is never behind the primary's horizon, lagging standby or not")
                    await stranger.close()
                    try await standby.resume()
                } catch {
                    try? await standby.resume()
                    throw error
                }
            }
        }
    }
}
