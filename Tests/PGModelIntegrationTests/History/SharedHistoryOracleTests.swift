import Foundation
import Logging
import NIOPosix
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
import Testing

/// The history fan-out reads each page once, as the database owner, and asks one query which user may
/// see what. This is its oracle: at every step of a world of owners, shares granted and revoked
/// (between the commit and the read too), cascade children, a bulk insert stored as one run, deletions
/// of shared rows and admins, every reader's cut of the shared page must equal, transaction for
/// transaction and change for change, that reader's own history read of the same range under
/// row-level security.
@Suite("Shared history fan-out against each user's own read")
struct SharedHistoryOracleTests {
    static let folder = EntityDescription(name: "Folder", attributes: [AttributeDescription(name: "name", type: .string)], relationships: [
        RelationshipDescription(name: "items", destination: "Item", isToMany: true, inverse: "folder", deleteRule: .cascade),
    ])
    static let item = EntityDescription(name: "Item", attributes: [AttributeDescription(name: "title", type: .string)], relationships: [
        RelationshipDescription(name: "folder", destination: "Folder", isToMany: false, inverse: "items"),
    ])
    static let schema = SchemaDescription(entities: [folder, item])

    static let logger: Logger = {
        var logger = Logger(label: "pgmodel.test.sharedhistory")
        logger.logLevel = .warning
        return logger
    }()

    /// Compares every reader's part of the shared pages after `after` (read `limit` transactions at a
    /// time, through to the newest) with that reader's own read of the same range. Returns each
    /// reader's transaction count, so a step can also say what it expects someone to see.
    @discardableResult
    static func check(_ gateway: DatabaseGateway, readers: [Requester], after: UInt64, limit: Int = 500,
                      _ step: String) async throws -> [Int] {
        var position = after
        var seen = Array(repeating: [HistoryRecord](), count: readers.count)
        var pages = 0
        while true {
            let shared = try await gateway.fetchSharedHistory(after: position, limit: limit, for: readers)
            #expect(shared.expiredThrough == nil)
            #expect(shared.transactions.count <= limit)
            #expect(shared.readThrough >= position)
            for index in readers.indices {
                let own = try await gateway.fetchHistory(
                    HistoryRequest(filter: .and([.token(.greater, position), .token(.lessOrEqual, shared.readThrough)])), as: readers[index])
                let part = shared.page(for: index)
                #expect(part == own, "\(step): reader \(index) after \(position) through \(shared.readThrough): fan-out \(part.transactions.map { ($0.token, $0.changes.map(\.changeIdentifier)) }) own \(own.transactions.map { ($0.token, $0.changes.map(\.changeIdentifier)) })")
                seen[index] += part.transactions
            }
            pages += 1
            position = shared.readThrough
            if !shared.isFull { break }
            #expect(pages < 1_000, "paging must make progress")
        }
        return seen.map(\.count)
    }

    static func save(_ gateway: DatabaseGateway, _ request: SaveRequest, as user: AuthenticatedUser) async throws {
        _ = try await gateway.save(request, as: .user(user))
    }

    @Test("every reader's part of the shared page is exactly their own row-level-security read, step by step")
    func fanOutMatchesOwnReads() async throws {
        var configuration = try PostgresStoreConfiguration.parse(try TestDatabase.url())
        configuration.schemaName = TestDatabase.uniqueSchema("fanora")
        let gateway = DatabaseGateway(configuration: configuration, maximumConnections: 4, requestTimeout: .seconds(60),
                                      eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: Self.logger)
        let alice = try await ServerTestHarness.makeUser("fo_alice")
        let bob = try await ServerTestHarness.makeUser("fo_bob")
        let carol = try await ServerTestHarness.makeUser("fo_carol")
        let admin = try await ServerTestHarness.makeUser("fo_admin", admin: true)
        // Readers: plain users; an admin in an admin session and in a plain one; a session that claims
        // an admin's role for a user who is none (its role shows it nothing); the direct store.
        let readers: [Requester] = [
            .user(alice), .user(bob), .user(carol), .user(admin),
            .user(AuthenticatedUser(id: admin.id, name: admin.name, isAdmin: false)),
            .user(AuthenticatedUser(id: carol.id, name: carol.name, isAdmin: true)),
            .trusted,
        ]
        func check(_ after: UInt64, _ step: String) async throws -> [Int] {
            let counts = try await Self.check(gateway, readers: readers, after: after, step)
            // Pages of a few transactions must add up to the same parts.
            try await Self.check(gateway, readers: readers, after: after, limit: 3, step + " (pages of 3)")
            return counts
        }
        do {
            _ = try await gateway.prepare(Self.schema, as: .trusted)
            // Anyone's share closure is the database owner's to ask for, never a service user's.
            let granted = try await Inspect.strings(
                "SELECT has_function_privilege('pgmodel_app', '\"\(configuration.schemaName)\".pgmodel_shared_keys_for(uuid)', 'EXECUTE')::text")
            #expect(granted == ["false"])
            let start = try await gateway.historyHorizon()
            let shelf = UUID.v7(), items = [UUID.v7(), UUID.v7(), UUID.v7()], bobs = UUID.v7(), bobsItem = UUID.v7()
            let folderRef = RowReference(entity: "Folder", id: shelf)

            // Alice's folder with items (cascade children), Bob's own folder, Carol's item.
            try await Self.save(gateway, SaveRequest(inserts: [RowValues(entity: "Folder", id: shelf, values: ["name": .string("shelf")])]
                + items.map { RowValues(entity: "Item", id: $0, values: ["title": .string("a"), "folder": .uuid(shelf)]) },
                bundleIdentifier: "alice.app", processIdentifier: "11"), as: alice)
            try await Self.save(gateway, SaveRequest(inserts: [RowValues(entity: "Folder", id: bobs, values: ["name": .string("bob")]),
                                                               RowValues(entity: "Item", id: bobsItem, values: ["title": .string("b"), "folder": .uuid(bobs)])]),
                               as: bob)
            try await Self.save(gateway, SaveRequest(inserts: [RowValues(entity: "Item", id: .v7(), values: ["title": .string("c")])]), as: carol)
            var counts = try await check(start, "private saves")
            #expect(counts[1] == 1 && counts[2] == 1, "bob and carol see only their own saves: \(counts)")
            #expect(counts[3] == 3 && counts[6] == 3, "the admin and the direct store see every save: \(counts)")
            #expect(counts[5] == 0, "a session claiming an admin's role for a non-admin sees nothing: \(counts)")

            // Alice shares the folder with Bob (his audience event), then edits a child and adds one.
            var mark = try await gateway.historyHorizon()
            try await Self.save(gateway, SaveRequest(shares: [ShareChange(record: folderRef, user: bob.name, permission: .readOnly)]), as: alice)
            try await Self.save(gateway, SaveRequest(updates: [RowValues(entity: "Item", id: items[0], values: ["title": .string("a2")])]), as: alice)
            let added = UUID.v7()
            try await Self.save(gateway, SaveRequest(inserts: [RowValues(entity: "Item", id: added, values: ["title": .string("new"), "folder": .uuid(shelf)])]), as: alice)
            counts = try await check(mark, "shared")
            #expect(counts[1] == 3, "bob hears of the share and both saves under it: \(counts)")
            #expect(counts[2] == 0, "carol hears of none of it: \(counts)")
            _ = try await check(start, "shared, from the start")

            // A bulk insert into the shared folder, written as one run; the shared children are each Bob's to see.
            mark = try await gateway.historyHorizon()
            let bulk = (0..<300).map { RowValues(entity: "Item", id: .v7(), values: ["title": .string("bulk \($0)"), "folder": .uuid(shelf)]) }
            try await Self.save(gateway, SaveRequest(inserts: bulk), as: alice)
            try await Self.save(gateway, SaveRequest(inserts: (0..<300).map { RowValues(entity: "Item", id: .v7(), values: ["title": .string("own \($0)")]) }), as: alice)
            counts = try await check(mark, "bulk runs")
            #expect(counts[1] == 1, "bob sees the run into the shared folder, not alice's private one: \(counts)")

            // Committed while shared, revoked before anyone read it: Bob's read no longer shows it, nor does the fan-out.
            mark = try await gateway.historyHorizon()
            try await Self.save(gateway, SaveRequest(updates: [RowValues(entity: "Item", id: items[1], values: ["title": .string("secret")])]), as: alice)
            try await Self.save(gateway, SaveRequest(shares: [ShareChange(record: folderRef, user: bob.name, permission: nil)]), as: alice)
            counts = try await check(mark, "revoked between commit and read")
            #expect(counts[1] == 1, "bob sees his revocation event only: \(counts)")
            _ = try await check(start, "revoked, from the start")

            // Shared again, read-write: Bob edits Alice's child; Alice deletes a shared child, then the folder.
            mark = try await gateway.historyHorizon()
            try await Self.save(gateway, SaveRequest(shares: [ShareChange(record: folderRef, user: bob.name, permission: .readWrite)]), as: alice)
            try await Self.save(gateway, SaveRequest(updates: [RowValues(entity: "Item", id: items[0], values: ["title": .string("by bob")])],
                                                     bundleIdentifier: "bob.app", processIdentifier: "22"), as: bob)
            try await Self.save(gateway, SaveRequest(deletes: [RowReference(entity: "Item", id: items[2])]), as: alice)
            _ = try await check(mark, "read-write share, a shared child deleted")
            let beforeFolderDelete = try await gateway.historyHorizon()
            try await Self.save(gateway, SaveRequest(deletes: [folderRef]), as: alice)
            counts = try await check(beforeFolderDelete, "shared folder deleted")
            #expect(counts[1] == 1, "bob hears of the deletion of the folder shared with him: \(counts)")
            // The admin's own save, and everything once more from the start.
            try await Self.save(gateway, SaveRequest(inserts: [RowValues(entity: "Folder", id: .v7(), values: ["name": .string("admin")])]), as: admin)
            _ = try await check(start, "everything")
            try await gateway.dropSchema()
            await gateway.close()
        } catch {
            try? await gateway.dropSchema()
            await gateway.close()
            throw error
        }
    }
}
