import Foundation
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
import PostgresNIO
import Testing

/// Sharing through the service, enforced by PostgreSQL's row-level security: who sees and changes what.
/// Real PostgreSQL, a real server on TCP, one client per user.
@Suite("Sharing: row-level security decides who sees and changes what")
struct SharingTests {
    /// The five kinds of user every cell of the matrix is tried as.
    enum Role: String, CaseIterable, CustomTestStringConvertible {
        case owner, reader, writer, stranger, admin
        var testDescription: String { rawValue }
    }

    /// The users of one test: the owner shares with the reader (read-only) and the writer (read-write).
    struct People {
        var owner, reader, writer, stranger, admin, extra: AuthenticatedUser

        static func make() async throws -> People {
            People(owner: try await ServerTestHarness.makeUser("alice"), reader: try await ServerTestHarness.makeUser("rita"),
                   writer: try await ServerTestHarness.makeUser("will"), stranger: try await ServerTestHarness.makeUser("sam"),
                   admin: try await ServerTestHarness.makeUser("ada", admin: true), extra: try await ServerTestHarness.makeUser("eve"))
        }

        func user(_ role: Role) -> AuthenticatedUser {
            switch role {
            case .owner: owner
            case .reader: reader
            case .writer: writer
            case .stranger: stranger
            case .admin: admin
            }
        }
    }

    /// One owner's records: E (shared with the reader and the writer) with a waypoint W, its checkpoint
    /// C and a supply S linked through a join table; U, not shared, with its waypoint WU.
    struct World {
        var token: String
        var e, u, w, wu, c, s: UUID

        static func make(_ owner: RemoteModelStore, _ people: People) async throws -> World {
            let token = "x" + ServerTestHarness.uniqueSuffix()
            let world = World(token: token, e: UUID.v7(), u: UUID.v7(), w: UUID.v7(), wu: UUID.v7(), c: UUID.v7(), s: UUID.v7())
            // E and U in a save of their own: their history is one run of inserts, of which the reader and the
            // writer may see E's alone.
            _ = try await owner.save(SaveRequest(inserts: [
                RowValues(entity: "Expedition", id: world.e, values: ["code": .string("\(token)-E"), "title": .string("E")]),
                RowValues(entity: "Expedition", id: world.u, values: ["code": .string("\(token)-U"), "title": .string("U")]),
            ]))
            _ = try await owner.save(SaveRequest(
                inserts: [
                    RowValues(entity: "Waypoint", id: world.w, values: ["name": .string("\(token)-W"), "expedition": .uuid(world.e)]),
                    RowValues(entity: "Waypoint", id: world.wu, values: ["name": .string("\(token)-WU"), "expedition": .uuid(world.u)]),
                    RowValues(entity: "Checkpoint", id: world.c, values: ["label": .string("\(token)-C"), "waypoint": .uuid(world.w)]),
                    RowValues(entity: "Supply", id: world.s, values: ["item": .string("\(token)-S")]),
                ],
                links: [LinkChange(entity: "Expedition", relationship: "supplies", source: world.e, destination: world.s, isAdded: true)],
                shares: [ShareChange(record: RowReference(entity: "Expedition", id: world.e), user: people.reader.name, permission: .readOnly),
                         ShareChange(record: RowReference(entity: "Expedition", id: world.e), user: people.writer.name, permission: .readWrite)]))
            return world
        }

        /// Only this world's rows of `entity`, by the token in `key`.
        func mine(_ entity: String, _ key: String) -> FetchRequest {
            FetchRequest(entity: entity, predicate: .string(.startsWith, .key(key), .value(.string(token))))
        }
    }

    static let schema = Schema(SharingModels.types).schemaDescription

    /// A server on a schema of its own with the sharing models registered by the database owner.
    static func withService<T: Sendable>(configure: (inout LineServerConfiguration) -> Void = { _ in },
                                         _ body: @Sendable (_ port: Int, _ schemaName: String) async throws -> T) async throws -> T {
        let schemaName = TestDatabase.uniqueSchema("shr")
        try await ServerTestHarness.register(schema, schemaName: schemaName)
        return try await ServerTestHarness.withServer(schemaName: schemaName, configure: configure) { port in try await body(port, schemaName) }
    }

    static func store(_ user: AuthenticatedUser, _ port: Int) async throws -> RemoteModelStore {
        let store = try RemoteModelStore(url: try ServerRemoteStoreTests.url(user, port: port))
        try await store.prepare(schema)
        return store
    }

    /// The error code of `body`, or nil when it succeeded.
    static func code(_ body: () async throws -> Void) async -> PGModelError.Code? {
        do {
            try await body()
            return nil
        } catch let error as PGModelError {
            return error.code
        } catch {
            return .internalError
        }
    }

    /// A value of a row as the database owner sees it (the truth, whatever any user may see).
    static func trusted(_ schemaName: String, _ sql: String) async throws -> [String] {
        try await ServerTestHarness.withDatabase(schemaName: schemaName) { _, connection in
            var values: [String] = []
            for try await row in try await connection.connection.query(PostgresQuery(unsafeSQL: sql), logger: ServerTestHarness.logger) {
                values.append((try? row.decode(String?.self)) ?? nil ?? "NULL")
            }
            return values
        }
    }

    // MARK: The permission matrix

    /// What each operation does for each role. `nil`: succeeds; a code: fails with it, writing nothing.
    struct Expected {
        var expeditions: Int, waypoints: Int, checkpoints: Int, supplies: Int, throughRelationship: Int, withWaypoints: Int
        var sharesSeen: Int?   // nil: not_found
        var historyOfE: Bool, historyOfU: Bool
        var updateRoot, updateChild, insertChild, linkChild, share, unshare, deleteChild, deleteRoot: PGModelError.Code?
        var deletesChild: Bool, deletesRoot: Bool

        static func of(_ role: Role) -> Expected {
            switch role {
            case .owner:
                Expected(expeditions: 2, waypoints: 2, checkpoints: 1, supplies: 1, throughRelationship: 1, withWaypoints: 2, sharesSeen: 2,
                         historyOfE: true, historyOfU: true, updateRoot: nil, updateChild: nil, insertChild: nil, linkChild: nil,
                         share: nil, unshare: nil, deleteChild: nil, deleteRoot: nil, deletesChild: true, deletesRoot: true)
            case .reader:
                Expected(expeditions: 1, waypoints: 1, checkpoints: 1, supplies: 1, throughRelationship: 1, withWaypoints: 1, sharesSeen: 1,
                         historyOfE: true, historyOfU: false, updateRoot: .forbidden, updateChild: .forbidden, insertChild: .forbidden,
                         linkChild: .forbidden, share: .forbidden, unshare: .forbidden, deleteChild: .forbidden, deleteRoot: .forbidden,
                         deletesChild: false, deletesRoot: false)
            case .writer:
                Expected(expeditions: 1, waypoints: 1, checkpoints: 1, supplies: 1, throughRelationship: 1, withWaypoints: 1, sharesSeen: 1,
                         historyOfE: true, historyOfU: false, updateRoot: nil, updateChild: nil, insertChild: nil, linkChild: nil,
                         share: .forbidden, unshare: .forbidden, deleteChild: nil, deleteRoot: .forbidden, deletesChild: true, deletesRoot: false)
            case .stranger:
                // A stranger learns nothing: another user's rows behave exactly like rows that do not exist.
                Expected(expeditions: 0, waypoints: 0, checkpoints: 0, supplies: 0, throughRelationship: 0, withWaypoints: 0, sharesSeen: nil,
                         historyOfE: false, historyOfU: false, updateRoot: .notFound, updateChild: .notFound, insertChild: .constraintViolation,
                         linkChild: .forbidden, share: .notFound, unshare: .notFound, deleteChild: nil, deleteRoot: nil,
                         deletesChild: false, deletesRoot: false)
            case .admin:
                Expected(expeditions: 2, waypoints: 2, checkpoints: 1, supplies: 1, throughRelationship: 1, withWaypoints: 2, sharesSeen: 2,
                         historyOfE: true, historyOfU: true, updateRoot: nil, updateChild: nil, insertChild: nil, linkChild: nil,
                         share: nil, unshare: nil, deleteChild: nil, deleteRoot: nil, deletesChild: true, deletesRoot: true)
            }
        }
    }

    @Test("the permission matrix: every operation as owner, read-only grantee, read-write grantee, stranger and admin",
          arguments: Role.allCases)
    func permissionMatrix(role: Role) async throws {
        try await Self.checkPermissionMatrix(role: role)
    }

    /// The body of ``permissionMatrix(role:)``, on a service `configure` sets up (the pooling tests run it
    /// behind PgBouncer in transaction mode).
    static func checkPermissionMatrix(role: Role, configure: (inout LineServerConfiguration) -> Void = { _ in }) async throws {
        let people = try await People.make()
        try await Self.withService(configure: configure) { port, schemaName in
            let owner = try await Self.store(people.owner, port)
            let actor = try await Self.store(people.user(role), port)
            defer { Task { await owner.close(); await actor.close() } }
            let world = try await World.make(owner, people)
            let expected = Expected.of(role)
            let t = world.token
            func count(_ entity: String, _ key: String) async throws -> Int { try await actor.count(world.mine(entity, key)) }

            // Reads: fetches, counts, ids, transitive children, join-table children, predicates through
            // relationships, aggregates over to-many relationships, related (fault) fetches.
            #expect(try await count("Expedition", "code") == expected.expeditions)
            #expect(try await actor.fetch(world.mine("Expedition", "code")).count == expected.expeditions)
            #expect(try await actor.fetchIdentifiers(world.mine("Expedition", "code")).count == expected.expeditions)
            #expect(try await count("Waypoint", "name") == expected.waypoints)
            #expect(try await count("Checkpoint", "label") == expected.checkpoints)
            #expect(try await count("Supply", "item") == expected.supplies)
            #expect(try await actor.count(FetchRequest(entity: "Checkpoint", predicate: .string(.startsWith, .key("waypoint.expedition.code"), .value(.string(t)))))
                    == expected.throughRelationship)
            #expect(try await actor.count(FetchRequest(entity: "Expedition", predicate: .and([
                .string(.startsWith, .key("code"), .value(.string(t))),
                .compare(.greater, .aggregate(Aggregate(.count, relationship: "waypoints")), .value(.int(0)))]))) == expected.withWaypoints)
            let faulted = try await actor.fetch(FetchRequest(entity: "Waypoint", related: RelatedScope(entity: "Expedition", relationship: "waypoints", ids: [world.e, world.u])))
            #expect(faulted.count == expected.waypoints)
            let joined = try await actor.fetch(FetchRequest(entity: "Supply", related: RelatedScope(entity: "Expedition", relationship: "supplies", ids: [world.e])))
            #expect(joined.count == expected.supplies)

            // Shares and history.
            let sharesCode = await Self.code { _ = try await actor.shares(of: RowReference(entity: "Expedition", id: world.e)) }
            if let seen = expected.sharesSeen {
                #expect(sharesCode == nil)
                #expect(try await actor.shares(of: RowReference(entity: "Expedition", id: world.e)).count == seen)
            } else {
                #expect(sharesCode == .notFound)
            }
            let history = try await actor.fetchHistory(HistoryRequest())
            let changed = Set(history.transactions.flatMap(\.changes).map(\.id))
            #expect(changed.contains(world.e) == expected.historyOfE)
            #expect(changed.contains(world.u) == expected.historyOfU)

            // Writes, each checked against what the database owner sees afterwards.
            let updateRoot = await Self.code {
                _ = try await actor.save(SaveRequest(updates: [RowValues(entity: "Expedition", id: world.e, values: ["title": .string("E2")])]))
            }
            #expect(updateRoot == expected.updateRoot)
            #expect(try await Self.trusted(schemaName, "SELECT title FROM \"\(schemaName)\".expedition WHERE id = '\(world.e)'")
                    == [expected.updateRoot == nil ? "E2" : "E"])

            let updateChild = await Self.code {
                _ = try await actor.save(SaveRequest(updates: [RowValues(entity: "Waypoint", id: world.w, values: ["name": .string("\(t)-W2")])]))
            }
            #expect(updateChild == expected.updateChild)
            #expect(try await Self.trusted(schemaName, "SELECT name FROM \"\(schemaName)\".waypoint WHERE id = '\(world.w)'")
                    == [expected.updateChild == nil ? "\(t)-W2" : "\(t)-W"])

            // A child inserted into the shared record belongs to the record's owner.
            let child = UUID.v7()
            let insertChild = await Self.code {
                _ = try await actor.save(SaveRequest(inserts: [RowValues(entity: "Waypoint", id: child, values: ["name": .string("\(t)-new"), "expedition": .uuid(world.e)])]))
            }
            #expect(insertChild == expected.insertChild)
            #expect(try await Self.trusted(schemaName, "SELECT owner_id::text FROM \"\(schemaName)\".waypoint WHERE id = '\(child)'")
                    == (expected.insertChild == nil ? [people.owner.id.uuidString.lowercased()] : []))

            let supply = UUID.v7()
            let linkChild = await Self.code {
                _ = try await actor.save(SaveRequest(inserts: [RowValues(entity: "Supply", id: supply, values: ["item": .string("\(t)-S2")])],
                                                     links: [LinkChange(entity: "Expedition", relationship: "supplies", source: world.e, destination: supply, isAdded: true)]))
            }
            #expect(linkChild == expected.linkChild)
            #expect(try await Self.trusted(schemaName, "SELECT owner_id::text FROM \"\(schemaName)\".supply WHERE id = '\(supply)'")
                    == (expected.linkChild == nil ? [people.owner.id.uuidString.lowercased()] : []))

            let share = await Self.code {
                _ = try await actor.save(SaveRequest(shares: [ShareChange(record: RowReference(entity: "Expedition", id: world.e), user: people.extra.name, permission: .readOnly)]))
            }
            #expect(share == expected.share)
            #expect(try await Self.trusted(schemaName, "SELECT count(*)::text FROM pgmodel.shares WHERE row_id = '\(world.e)' AND grantee_id = '\(people.extra.id)'")
                    == [expected.share == nil ? "1" : "0"])

            let unshare = await Self.code {
                _ = try await actor.save(SaveRequest(shares: [ShareChange(record: RowReference(entity: "Expedition", id: world.e), user: people.reader.name, permission: nil)]))
            }
            #expect(unshare == expected.unshare)
            #expect(try await Self.trusted(schemaName, "SELECT count(*)::text FROM pgmodel.shares WHERE row_id = '\(world.e)' AND grantee_id = '\(people.reader.id)'")
                    == [expected.unshare == nil ? "0" : "1"])

            let deleteChild = await Self.code {
                _ = try await actor.save(SaveRequest(deletes: [RowReference(entity: "Waypoint", id: world.w)]))
            }
            #expect(deleteChild == expected.deleteChild)
            // The checkpoint goes with its waypoint (cascade).
            #expect(try await Self.trusted(schemaName, "SELECT count(*)::text FROM \"\(schemaName)\".checkpoint WHERE id = '\(world.c)'")
                    == [expected.deletesChild ? "0" : "1"])

            let deleteRoot = await Self.code {
                _ = try await actor.save(SaveRequest(deletes: [RowReference(entity: "Expedition", id: world.e)]))
            }
            #expect(deleteRoot == expected.deleteRoot)
            #expect(try await Self.trusted(schemaName, "SELECT count(*)::text FROM \"\(schemaName)\".expedition WHERE id = '\(world.e)'")
                    == [expected.deletesRoot ? "0" : "1"])
            if expected.deletesRoot {
                // Its shares went with it.
                #expect(try await Self.trusted(schemaName, "SELECT count(*)::text FROM pgmodel.shares WHERE row_id = '\(world.e)'") == ["0"])
            }

            // Uniqueness is per owner: the owner's insert of E's code updates E (upsert); anyone else's is
            // their own row, and no error tells them the value exists elsewhere.
            let copy = UUID.v7()
            let result = try await actor.save(SaveRequest(inserts: [RowValues(entity: "Expedition", id: copy, values: ["code": .string("\(t)-U"), "title": .string("mine")])]))
            switch role {
            case .owner:
                #expect(result.remappedIdentifiers[copy] == world.u)
            default:
                #expect(result.remappedIdentifiers.isEmpty)
                #expect(try await Self.trusted(schemaName, "SELECT owner_id::text FROM \"\(schemaName)\".expedition WHERE id = '\(copy)'")
                        == [people.user(role).id.uuidString.lowercased()])
            }
        }
    }
}
