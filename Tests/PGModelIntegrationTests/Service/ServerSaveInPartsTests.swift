import Foundation
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
@_spi(PGModelInternals) import PGModelWire
import Testing
import PGModelTesting

/// Saves longer than the service's request-line limit (PROTOCOL.md §4, A save in parts): the Swift client
/// splits them, the server holds the parts and runs them as one transaction, and what it holds is bounded
/// per save and across connections.
@Suite("Server: saves in parts")
struct ServerSaveInPartsTests {
    static func schema(_ entity: String) -> SchemaDescription { ServerRemoteStoreTests.schema(entity) }

    static func row(_ entity: String, _ code: String, rank: Int64) -> RowValues {
        ServerRemoteStoreTests.row(entity, code, rank: rank)
    }

    /// A server with `lineBytes` lines, `entity` registered, and a store logged in as a fresh user.
    static func withStore(lineBytes: Int, configure: @escaping @Sendable (inout LineServerConfiguration) -> Void = { _ in },
                          _ body: @Sendable (RemoteModelStore, String, Int) async throws -> Void) async throws {
        let user = try await ServerTestHarness.makeUser("parts")
        let entity = ServerTestHarness.uniqueEntity("Part")
        try await ServerTestHarness.register(Self.schema(entity))
        try await ServerTestHarness.withRunningServer(maxLineBytes: lineBytes, configure: configure) { _, port in
            let store = try RemoteModelStore(url: try ServerRemoteStoreTests.url(user, port: port))
            do {
                try await store.prepare(Self.schema(entity))
                try await body(store, entity, port)
            } catch {
                await store.close()
                throw error
            }
            await store.close()
        }
    }

    @Test("a save longer than a line goes in parts and commits as one transaction, with its author")
    func commitsAsOne() async throws {
        try await Self.withStore(lineBytes: 8_192) { store, entity, _ in
            let hello = try await store.connect()
            #expect(hello.maxLineBytes == 8_192)
            #expect(hello.maxSaveBytes == 64 << 20)
            let before = try await store.fetchHistory(HistoryRequest(newestFirst: true, limit: 1)).transactions.first?.token ?? 0
            let rows = (0..<300).map { Self.row(entity, "c\($0)", rank: Int64($0)) }
            let saved = try await store.save(SaveRequest(inserts: rows, author: "importer"))
            #expect(saved.remappedIdentifiers.isEmpty)
            #expect(try await store.count(FetchRequest(entity: entity)) == 300)

            let page = try await store.fetchHistory(HistoryRequest(filter: .token(.greater, before)))
            let mine = page.transactions.filter { $0.changes.contains { $0.entity == entity } }
            #expect(mine.count == 1)
            #expect(mine.first?.author == "importer")
            #expect(mine.first?.changes.count == 300)

            // Updates, deletes and an upsert of an existing unique code, split the same way.
            let updates = rows.prefix(150).map { RowValues(entity: entity, id: $0.id, values: ["rank": .int(-1)]) }
            let deletes = rows.suffix(100).map { RowReference(entity: entity, id: $0.id) }
            let duplicate = Self.row(entity, "c120", rank: 7)
            let mixed = try await store.save(SaveRequest(inserts: [duplicate], updates: Array(updates), deletes: Array(deletes)))
            #expect(mixed.remappedIdentifiers == [duplicate.id: rows[120].id])
            #expect(try await store.count(FetchRequest(entity: entity)) == 200)
            let negative = FetchRequest(entity: entity, predicate: .compare(.equal, .key("rank"), .value(.int(-1))))
            #expect(try await store.count(negative) == 149)   // c120 was upserted to rank 7 after its update
        }
    }

    @Test("an error found at the last part rolls every part back, and the connection goes on")
    func atomic() async throws {
        try await Self.withStore(lineBytes: 8_192) { store, entity, _ in
            var rows = (0..<300).map { Self.row(entity, "a\($0)", rank: Int64($0)) }
            rows[299].values["rank"] = .string("not a number")
            let error = await #expect(throws: PGModelError.self) { try await store.save(SaveRequest(inserts: rows)) }
            #expect(error?.code == .typeMismatch)
            #expect(error?.keyPath == "rank")
            #expect(try await store.count(FetchRequest(entity: entity)) == 0)

            // A unique conflict between two parts of one save: the first wins nothing either.
            var clash = (0..<300).map { Self.row(entity, "b\($0)", rank: Int64($0)) }
            clash[299] = Self.row(entity, "b0", rank: 1)
            _ = try? await store.save(SaveRequest(inserts: clash))
            let codes = try await store.fetch(FetchRequest(entity: entity)).compactMap { row -> String? in
                if case .string(let code) = row.values["code"] { return code }
                return nil
            }
            #expect(codes.isEmpty || Set(codes).count == codes.count)
            _ = try await store.save(SaveRequest(inserts: [Self.row(entity, "after", rank: 1)]))
            #expect(try await store.count(FetchRequest(entity: entity, predicate: .compare(.equal, .key("code"), .value(.string("after"))))) == 1)
        }
    }

    @Test("one change longer than a line, or a save past the server's save limit, throws before anything is sent")
    func refusedByTheClient() async throws {
        try await Self.withStore(lineBytes: 8_192, configure: { $0.maxSaveBytes = 20_000 }) { store, entity, _ in
            #expect(try await store.connect().maxSaveBytes == 20_000)
            var huge = Self.row(entity, "huge", rank: 1)
            huge.values["blob"] = .data(Data(repeating: 7, count: 9_000))
            let tooLong = await #expect(throws: PGModelError.self) {
                try await store.save(SaveRequest(inserts: [Self.row(entity, "x", rank: 0), huge]))
            }
            #expect(tooLong?.code == .lineTooLong)

            let many = (0..<300).map { Self.row(entity, "m\($0)", rank: Int64($0)) }
            let tooLarge = await #expect(throws: PGModelError.self) { try await store.save(SaveRequest(inserts: many)) }
            #expect(tooLarge?.code == .saveTooLarge)
            #expect(try await store.count(FetchRequest(entity: entity)) == 0)
            _ = try await store.save(SaveRequest(inserts: Array(many.prefix(40))))
            #expect(try await store.count(FetchRequest(entity: entity)) == 40)
        }
    }

    /// A save's part 0 of 2 on the wire: about `bytes` long.
    static func firstPart(_ entity: String, id: Int, bytes: Int) -> String {
        let note = String(repeating: "n", count: max(0, bytes - 260))
        return #"{"id":\#(id),"op":"save","part":0,"parts":2,"inserts":[{"entity":"\#(entity)","id":"\#(UUID.v7().uuidString.lowercased())","values":{"code":"\#(note)","rank":1,"score":null,"due":null,"blob":null}}]}"#
    }

    /// Sends part 0 of a save (ids from `id` on) until the server has room to hold it (it frees a closed
    /// connection's parts when it sees the close), for at most 10 s.
    static func expectHeldOnceFree(_ client: RawProtocolClient, _ entity: String, id: Int) async throws {
        var id = id
        var answer = try await client.request(Self.firstPart(entity, id: id, bytes: 2_000))
        let deadline = ContinuousClock.now + .seconds(10)
        while answer.code == "save_too_large", ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            id += 1
            answer = try await client.request(Self.firstPart(entity, id: id, bytes: 2_000))
        }
        #expect(answer.object["held"] as? Int == 1, "\(answer)")
    }

    static func login(_ client: RawProtocolClient, _ user: AuthenticatedUser) async throws {
        let hello = try await client.request(#"{"id":0,"op":"hello","user":"\#(user.name)","password":"secret","protocol":1}"#)
        #expect(hello.ok == true, "\(hello)")
    }

    @Test("what all connections hold is bounded: past it a part is save_too_large, and a save that runs or a connection that closes gives its bytes back")
    func heldAcrossConnections() async throws {
        let user = try await ServerTestHarness.makeUser("parts")
        let entity = ServerTestHarness.uniqueEntity("Part")
        try await ServerTestHarness.register(Self.schema(entity))
        try await ServerTestHarness.withRunningServer(configure: { $0.maxHeldSaveBytes = 3_000; $0.maxHeldSaveBytesPerUser = 3_000 }) { _, port in
            let a = try await RawProtocolClient.connect(port: port)
            let b = try await RawProtocolClient.connect(port: port)
            try await Self.login(a, user)
            try await Self.login(b, user)
            for client in [a, b] {
                _ = try await client.request(#"{"id":1,"op":"register","schema":\#(String(decoding: try JSONEncoder().encode(Self.schema(entity)), as: UTF8.self))}"#)
            }
            let held = try await a.request(Self.firstPart(entity, id: 2, bytes: 2_000))
            #expect(held.object["held"] as? Int == 1, "\(held)")
            let refused = try await b.request(Self.firstPart(entity, id: 3, bytes: 2_000))
            #expect(refused.code == "save_too_large", "\(refused)")
            #expect(refused.idNumber == 3)

            // A's save runs: its bytes come back before its answer is written.
            let last = #"{"id":4,"op":"save","part":1,"parts":2,"inserts":[]}"#
            let committed = try await a.request(last)
            #expect(committed.object["remapped"] != nil, "\(committed)")
            let now = try await b.request(Self.firstPart(entity, id: 5, bytes: 2_000))
            #expect(now.object["held"] as? Int == 1, "\(now)")

            // B goes away holding its part: A can hold again once the server has seen B close.
            await b.close()
            try await Self.expectHeldOnceFree(a, entity, id: 6)
            let count = try await a.request(#"{"id":99,"op":"count","entity":"\#(entity)"}"#)
            #expect(count.count == 1)   // only A's first save committed
            await a.close()
        }
    }

    @Test("a save in parts that waits too long for its next part is dropped with its connection, even one kept busy by a subscription and pings; its room comes back")
    func heldSaveTimeout() async throws {
        let user = try await ServerTestHarness.makeUser("parts")
        let entity = ServerTestHarness.uniqueEntity("Part")
        try await ServerTestHarness.register(Self.schema(entity))
        try await ServerTestHarness.withRunningServer(configure: { $0.maxHeldSaveBytes = 3_000; $0.maxHeldSaveBytesPerUser = 3_000; $0.heldSaveTimeout = .seconds(2) }) { _, port in
            let holder = try await RawProtocolClient.connect(port: port)
            let other = try await RawProtocolClient.connect(port: port)
            defer { Task { await holder.close(); await other.close() } }
            try await Self.login(holder, user)
            try await Self.login(other, user)
            for client in [holder, other] {
                _ = try await client.request(#"{"id":1,"op":"register","schema":\#(String(decoding: try JSONEncoder().encode(Self.schema(entity)), as: UTF8.self))}"#)
            }
            // A subscriber is never idle, and its pings keep it busy: neither may keep the parts held.
            _ = try await ServerHistoryTests.request(holder, #"{"id":2,"op":"subscribe"}"#, id: 2)
            let held = try await ServerHistoryTests.request(holder, Self.firstPart(entity, id: 3, bytes: 2_000), id: 3)
            #expect(held.object["held"] as? Int == 1, "\(held)")
            let refused = try await other.request(Self.firstPart(entity, id: 4, bytes: 2_000))
            #expect(refused.code == "save_too_large", "the holder's part fills the budget: \(refused)")

            var notice: RawResponse?
            var id = 5
            let giveUp = ContinuousClock.now + .seconds(20)
            while notice == nil, ContinuousClock.now < giveUp {
                try await holder.sendLine(#"{"id":\#(id),"op":"ping"}"#)
                // Answers, events, and at last the id-null timeout line; then the socket closes.
                while true {
                    let line = try RawResponse(try await holder.readLine(timeout: .seconds(15)))
                    if line.object["id"] is NSNull, line.code == "timeout" { notice = line; break }
                    if line.idNumber == id { break }
                }
                id += 1
            }
            let closing = try #require(notice, "no timeout line within 20 s of pings")
            #expect(closing.message?.contains("next part") == true, "\(closing)")
            try await holder.expectClosed()

            // The dropped part's room is free again once the server has seen the connection end.
            try await Self.expectHeldOnceFree(other, entity, id: 100)
            let count = try await other.request(#"{"id":999,"op":"count","entity":"\#(entity)"}"#)
            #expect(count.count == 0, "nothing of the dropped save was written")
        }
    }

    @Test("ModelContext.save() of models past the default line limit, through pgmodel://", arguments: [StoreKind.service])
    func contextSave(_ kind: StoreKind) async throws {
        let fixture = try await StoreFixture.make(kind, [Voyage.self])
        let token = fixture.token
        let count = try await offCooperativePool {
            let context = fixture.newContext()
            let start = Date(timeIntervalSince1970: 1_700_000_000)
            let notes = String(repeating: "a long note about the voyage ", count: 20)
            let destination = "Oslo \(token)"
            for n in 0..<2_500 {
                context.insert(Voyage(name: "v\(n)-\(token)", destination: destination, startDate: start, endDate: start, notes: notes))
            }
            try context.save()
            let other = ModelContext(fixture.container)
            return try other.fetchCount(FetchDescriptor<Voyage>(predicate: #Predicate { $0.destination == destination }))
        }
        #expect(count == 2_500)
    }
}
