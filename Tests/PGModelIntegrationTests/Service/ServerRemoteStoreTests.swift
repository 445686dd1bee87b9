import Foundation
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelWire
import Testing

@_spi(PGModelInternals) @testable import PGModel

/// The Swift client (`RemoteModelStore`) against a live server.
@Suite("Server: RemoteModelStore round trips")
struct ServerRemoteStoreTests {
    static func url(_ user: AuthenticatedUser, port: Int, password: String = "secret") throws -> URL {
        try #require(URL(string: "pgmodel://\(user.name):\(password)@127.0.0.1:\(port)"))
    }

    static func schema(_ entity: String) -> SchemaDescription {
        SchemaDescription(entities: [
            EntityDescription(
                name: entity,
                attributes: [
                    AttributeDescription(name: "code", type: .string, isUnique: true),
                    AttributeDescription(name: "rank", type: .int64),
                    AttributeDescription(name: "score", type: .double, isOptional: true),
                    AttributeDescription(name: "due", type: .date, isOptional: true),
                    AttributeDescription(name: "blob", type: .data, isOptional: true),
                ]),
        ])
    }

    static func row(_ entity: String, _ code: String, rank: Int64, score: Double? = nil) -> RowValues {
        RowValues(entity: entity, id: UUID.v7(), values: [
            "code": .string(code), "rank": .int(rank), "score": score.map(PGValue.double) ?? .null,
            "due": .date(Date(timeIntervalSince1970: 1_714_557_600)), "blob": .data(Data([0, 1, 2, 255])),
        ])
    }

    // Saves longer than the server's line limit: ServerSaveInPartsTests.

    @Test("prepare, save, fetch, count, ids, update, delete and upsert through the store")
    func roundTrip() async throws {
        let user = try await ServerTestHarness.makeUser("remote")
        let entity = ServerTestHarness.uniqueEntity("Item")
        try await ServerTestHarness.withServer { port in
            let store = try RemoteModelStore(url: try Self.url(user, port: port))
            let hello = try await store.connect()
            #expect(hello.server == "pgmodel/0.1")
            #expect(hello.userID == user.id)
            try await ServerTestHarness.register(Self.schema(entity))
            try await store.prepare(Self.schema(entity))

            let a = Self.row(entity, "a", rank: 3, score: 1.5)
            let b = Self.row(entity, "b", rank: 1)
            let c = Self.row(entity, "c", rank: 2, score: 2)
            let saved = try await store.save(SaveRequest(inserts: [a, b, c], author: "test"))
            #expect(saved.remappedIdentifiers.isEmpty)

            let sorted = try await store.fetch(FetchRequest(entity: entity, sort: [SortKey("rank")]))
            #expect(sorted.map(\.id) == [b.id, c.id, a.id])
            #expect(sorted.last?.values["score"] == .double(1.5))
            #expect(sorted.last?.values["blob"] == .data(Data([0, 1, 2, 255])))
            #expect(sorted.last?.values["due"] == .date(Date(timeIntervalSince1970: 1_714_557_600)))

            let filtered = FetchRequest(
                entity: entity, predicate: .compare(.greaterOrEqual, .key("rank"), .value(.int(2))),
                sort: [SortKey("rank", ascending: false)], limit: 1)
            #expect(try await store.fetch(filtered).map(\.id) == [a.id])
            #expect(try await store.count(FetchRequest(entity: entity, predicate: filtered.predicate)) == 2)
            #expect(try await store.fetchIdentifiers(filtered) == [RowReference(entity: entity, id: a.id)])

            _ = try await store.save(SaveRequest(
                updates: [RowValues(entity: entity, id: b.id, values: ["rank": .int(10)])],
                deletes: [RowReference(entity: entity, id: c.id)]))
            let after = try await store.fetch(FetchRequest(entity: entity, sort: [SortKey("rank")]))
            #expect(after.map(\.id) == [a.id, b.id])

            // An insert with an existing unique code becomes an update of that row (SwiftData's upsert).
            let duplicate = Self.row(entity, "a", rank: 7)
            let upsert = try await store.save(SaveRequest(inserts: [duplicate]))
            #expect(upsert.remappedIdentifiers == [duplicate.id: a.id])
            #expect(try await store.fetch(FetchRequest(entity: entity, predicate: .compare(.equal, .key("code"), .value(.string("a"))))).first?.values["rank"] == .int(7))
            await store.close()
        }
    }

    @Test("server errors arrive as PGModelError with the server's code")
    func errors() async throws {
        let user = try await ServerTestHarness.makeUser("remote")
        try await ServerTestHarness.withServer { port in
            let store = try RemoteModelStore(url: try Self.url(user, port: port))
            let missing = "Missing_\(ServerTestHarness.uniqueSuffix())"
            let unknown = await #expect(throws: PGModelError.self) { try await store.count(FetchRequest(entity: missing)) }
            #expect(unknown?.code == .unknownEntity)
            #expect(unknown?.message.contains(missing) == true)

            let invalid = await #expect(throws: PGModelError.self) {
                try await store.prepare(SchemaDescription(entities: [EntityDescription(name: "1bad", attributes: [])]))
            }
            #expect(invalid?.code == .invalidSchema)

            let wrong = try RemoteModelStore(url: try Self.url(user, port: port, password: "nope"))
            let denied = await #expect(throws: PGModelError.self) { try await wrong.ping() }
            #expect(denied?.code == .authenticationFailed)
            await wrong.close()
            await store.close()
            let closed = await #expect(throws: PGModelError.self) { try await store.ping() }
            #expect(closed?.code == .connectionFailed)
        }
    }

    @Test("URLs the store cannot use throw invalid_configuration", arguments: [
        "postgres://a:b@host:7432", "pgmodel://host:7432", "pgmodel://a:b@:7432", "pgmodel://a:b@host:7432/db",
    ])
    func invalidURLs(text: String) throws {
        let url = try #require(URL(string: text))
        let error = #expect(throws: PGModelError.self) { try RemoteModelStore(url: url) }
        #expect(error?.code == .invalidConfiguration)
    }

    @Test("endpoint parsing: default port, percent-decoded credentials, no password in the description")
    func endpoint() throws {
        let store = try RemoteModelStore(url: try #require(URL(string: "pgmodel://al%40ice:p%3Ass@db.example")))
        #expect(store.endpoint.port == 7432)
        #expect(store.endpoint.user == "al@ice")
        #expect(store.endpoint.password == "p:ss")
        #expect(store.endpoint.description == "pgmodel://al@ice@db.example:7432")
        #expect(!"\(store.endpoint)".contains("p:ss"))
    }

    @Test("concurrent calls share one pipelined connection and each gets its own answer")
    func concurrentCalls() async throws {
        let user = try await ServerTestHarness.makeUser("remote")
        let entity = ServerTestHarness.uniqueEntity("Item")
        try await ServerTestHarness.withServer { port in
            let store = try RemoteModelStore(url: try Self.url(user, port: port))
            try await ServerTestHarness.register(Self.schema(entity))
            try await store.prepare(Self.schema(entity))
            let rows = (1...12).map { Self.row(entity, "c\($0)", rank: Int64($0)) }
            _ = try await store.save(SaveRequest(inserts: rows))
            try await withThrowingTaskGroup(of: (Int64, Int).self) { group in
                for threshold in Int64(0)..<30 {
                    group.addTask {
                        let count = try await store.count(FetchRequest(
                            entity: entity, predicate: .compare(.greater, .key("rank"), .value(.int(threshold)))))
                        return (threshold, count)
                    }
                }
                for try await (threshold, count) in group {
                    #expect(count == max(0, 12 - Int(threshold)), "rank > \(threshold)")
                }
            }
            await store.close()
        }
    }

    @Test("after the server restarts, the next call reconnects, logs in again and finds the data")
    func reconnect() async throws {
        let user = try await ServerTestHarness.makeUser("remote")
        let entity = ServerTestHarness.uniqueEntity("Item")
        let row = Self.row(entity, "kept", rank: 1)
        let (store, port) = try await ServerTestHarness.withServer { port in
            let store = try RemoteModelStore(url: try Self.url(user, port: port))
            try await ServerTestHarness.register(Self.schema(entity))
            try await store.prepare(Self.schema(entity))
            _ = try await store.save(SaveRequest(inserts: [row]))
            return (store, port)
        }
        // The server is gone: the call fails cleanly instead of hanging.
        let down = await #expect(throws: PGModelError.self) { try await store.count(FetchRequest(entity: entity)) }
        #expect(down?.code == .connectionFailed)

        try await ServerTestHarness.withServer(port: port) { _ in
            // A raw client that never registered is served from the schema the database remembers.
            let raw = try await RawProtocolClient.connect(port: port)
            #expect(try await RawProtocolTests.hello(raw, user.name, "secret").ok == true)
            #expect(try await raw.request(#"{"id":2,"op":"count","entity":"\#(entity)"}"#).count == 1)
            await raw.close()

            #expect(try await store.fetch(FetchRequest(entity: entity)).map(\.id) == [row.id])
            await store.close()
        }
    }
}
