import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
import Testing

/// In this suite because it stalls PostgreSQL on purpose (history reads wait on a locked
/// `pgmodel.history_deletions`), which scripts/test.sh runs alone.
extension DeadlineTests {
    @Test("subscribers of one user that leave during a burst of saves share one history read, then their connections end")
    func departedSubscribersStopAfterTheReadInFlight() async throws {
        let subscribers = 4
        let saves = 40
        let user = try await ServerTestHarness.makeUser("burst")
        let entity = ServerTestHarness.uniqueEntity("Burst")
        let schema = try RawProtocolTests.schemaJSON(entity)
        try await ServerTestHarness.register(json: schema)
        // Each stalled read holds a database connection: leave the writer some.
        try await ServerTestHarness.withRunningServer(configure: { $0.maxDatabaseConnections = subscribers + 4 }) { server, port in
            var clients: [RawProtocolClient] = []
            for _ in 0..<subscribers {
                let client = try await RawProtocolClient.connect(port: port)
                clients.append(client)
                #expect(try await RawProtocolTests.hello(client, user.name, "secret").ok == true)
                #expect(try await client.request(#"{"id":7,"op":"subscribe"}"#).ok == true)
            }
            let writer = try await RawProtocolClient.connect(port: port)
            defer { Task { await writer.close() } }
            #expect(try await RawProtocolTests.hello(writer, user.name, "secret").ok == true)
            #expect(try await writer.request(#"{"id":2,"op":"register","schema":\#(schema)}"#).ok == true)
            #expect(server.signalForwarderCount == subscribers)

            // Every visibility read now waits on the lock: the first ring starts one for the user, shared by
            // all four connections, and the rest of the burst arrives while it waits.
            let lock = try await DeadlineTests.TableLock("pgmodel.history_deletions")
            let before = server.visibilityReadCount
            do {
            for n in 0..<saves {
                let id = UUID.v7().uuidString.lowercased()
                let saved = try await writer.request(
                    #"{"id":\#(10 + n),"op":"save","inserts":[{"entity":"\#(entity)","id":"\#(id)","values":{"name":"n\#(n)","rank":\#(n)}}]}"#)
                #expect(saved.ok == true, "\(saved)")
            }
            try await ServerHistoryTests.eventually("a read in flight for the user", timeout: .seconds(15)) {
                server.visibilityReadCount - before >= 1
            }
            for client in clients { await client.close() }
            } catch {
                try await lock.release()
                throw error
            }
            try await lock.release()

            try await ServerHistoryTests.eventually("every departed subscriber's forwarding ended", timeout: .seconds(15)) {
                server.signalForwarderCount == 0
            }
            // One read for the user answered the whole burst (and at most one more round for the rings
            // that arrived meanwhile); one per connection or per save would be a backlog.
            let reads = server.visibilityReadCount - before
            #expect(reads <= 2, "\(reads) history reads for \(subscribers) subscribers of one user and \(saves) saves")
        }
    }
}
