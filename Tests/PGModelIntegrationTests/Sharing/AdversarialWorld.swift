import Foundation
@_spi(PGModelInternals) import PGModelCore
import PostgresNIO

/// What the adversarial isolation suite knows of the database, and the plain-Swift rules of who may see
/// and change what.
///
/// Rows, links and ownership are read from the database as its owner (the truth the service cannot
/// hide from the test); shares are what the owners were told they made, kept by the test and compared
/// with `pgmodel.shares` after every step. Visibility is computed here from both, by the rules
/// PROTOCOL.md states: a user reads their own rows and every row a share made to them covers (the shared
/// record, keyed by store, class and id, while it has the share's owner, and what it owns through
/// `.cascade` edges, transitively, among rows of that owner); writes need a read-write share; deleting a
/// shared record itself stays with its owner.
struct AdversarialWorld: Equatable {
    /// The isolation models' tables (no subclasses: one class per table).
    enum Table: String, CaseIterable, Hashable, Sendable {
        case trip, stop, photo, supply, note

        var entity: String {
            switch self {
            case .trip: "Trip"
            case .stop: "Stop"
            case .photo: "Photo"
            case .supply: "Supply"
            case .note: "Note"
            }
        }

        /// The text attribute the suite writes.
        var text: String {
            switch self {
            case .trip, .stop: "name"
            case .photo: "caption"
            case .supply: "item"
            case .note: "text"
            }
        }

        /// The to-one relationship stored in this table, its column, and its destination.
        var reference: (name: String, column: String, destination: Table)? {
            switch self {
            case .trip: ("cover", "cover_id", .photo)
            case .stop: ("trip", "trip_id", .trip)
            case .supply: ("stop", "stop_id", .stop)
            case .photo, .note: nil
            }
        }

        /// Whether the to-one is an edge of ownership: `Trip.cover` (`.cascade`), `Stop.trip` (the key of
        /// `Trip.stops`, `.cascade`). `Supply.stop` is a plain reference.
        var referenceIsOwnership: Bool { self == .trip || self == .stop }
    }

    struct Key: Hashable, Comparable, CustomStringConvertible {
        var store: Int
        var table: Table
        var id: UUID

        static func < (a: Key, b: Key) -> Bool {
            (a.store, a.table.rawValue, a.id.uuidString) < (b.store, b.table.rawValue, b.id.uuidString)
        }

        var description: String { "\(table.entity) \(id.uuidString.suffix(8)) in store \(store)" }
    }

    struct Row: Hashable {
        var owner: UUID?
        var text: String?
        var reference: UUID?
    }

    /// A `Trip.supplies` link.
    struct Link: Hashable {
        var store: Int
        var trip: UUID
        var supply: UUID
    }

    struct ShareKey: Hashable, Comparable, CustomStringConvertible {
        var store: Int
        var table: Table
        var id: UUID
        var grantee: UUID

        static func < (a: ShareKey, b: ShareKey) -> Bool {
            (a.store, a.table.rawValue, a.id.uuidString, a.grantee.uuidString) < (b.store, b.table.rawValue, b.id.uuidString, b.grantee.uuidString)
        }

        var description: String { "share of \(table.entity) \(id.uuidString.suffix(8)) in store \(store) with \(grantee.uuidString.suffix(8))" }
    }

    struct Share: Hashable {
        var owner: UUID?
        var readWrite: Bool
    }

    var rows: [Key: Row] = [:]
    var links: Set<Link> = []
    var shares: [ShareKey: Share] = [:]

    // MARK: Reading the truth

    /// Rows and links of every store, read as the database owner.
    static func read(stores: [String], on connection: PostgresConnection, logger: Logger) async throws -> (rows: [Key: Row], links: Set<Link>) {
        var rows: [Key: Row] = [:]
        var links: Set<Link> = []
        for (store, schema) in stores.enumerated() {
            for table in Table.allCases {
                let reference = table.reference.map { "\"\($0.column)\"" } ?? "NULL::uuid"
                let sql = "SELECT id, owner_id, \"\(table.text)\", \(reference) FROM \"\(schema)\".\"\(table.rawValue)\""
                for try await (id, owner, text, ref) in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
                    .decode((UUID, UUID?, String?, UUID?).self) {
                    rows[Key(store: store, table: table, id: id)] = Row(owner: owner, text: text, reference: ref)
                }
            }
            let sql = "SELECT trip_id, supplies_id FROM \"\(schema)\".trip_supplies"
            for try await (trip, supply) in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode((UUID, UUID).self) {
                links.insert(Link(store: store, trip: trip, supply: supply))
            }
        }
        return (rows, links)
    }

    /// `pgmodel.shares` of the stores, as share keys (the root class is the table's class).
    static func readShares(stores: [String], on connection: PostgresConnection, logger: Logger) async throws -> [ShareKey: Share] {
        var result: [ShareKey: Share] = [:]
        let names = stores.map { "'\($0)'" }.joined(separator: ", ")
        let sql = "SELECT schema_name, root_entity, row_id, grantee_id, owner_id, permission FROM pgmodel.shares WHERE schema_name IN (\(names))"
        for try await (schema, root, id, grantee, owner, permission) in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
            .decode((String, String, UUID, UUID, UUID?, String).self) {
            guard let store = stores.firstIndex(of: schema), let table = Table.allCases.first(where: { $0.entity == root }) else { continue }
            result[ShareKey(store: store, table: table, id: id, grantee: grantee)] = Share(owner: owner, readWrite: permission == "readWrite")
        }
        return result
    }

    // MARK: Who may see and change what

    /// The rows `key` owns through `.cascade` edges, transitively, among rows whose owner is `owner`.
    func owned(by key: Key, owner: UUID?) -> Set<Key> {
        var result: Set<Key> = []
        var frontier = [key]
        while let parent = frontier.popLast() {
            for child in children(of: parent) where rows[child]?.owner == owner && result.insert(child).inserted {
                frontier.append(child)
            }
        }
        return result
    }

    /// Every `.cascade` child of `key`, whoever owns it.
    func children(of key: Key) -> [Key] {
        guard key.table == .trip, let trip = rows[key] else { return [] }
        var result: [Key] = []
        if let cover = trip.reference, rows[Key(store: key.store, table: .photo, id: cover)] != nil {
            result.append(Key(store: key.store, table: .photo, id: cover))
        }
        for (other, row) in rows where other.store == key.store && other.table == .stop && row.reference == key.id {
            result.append(other)
        }
        for link in links where link.store == key.store && link.trip == key.id {
            let supply = Key(store: key.store, table: .supply, id: link.supply)
            if rows[supply] != nil { result.append(supply) }
        }
        return result
    }

    /// Every row `key`'s delete may take with it through `.cascade` edges, whoever owns it.
    func descendants(of key: Key) -> Set<Key> {
        var result: Set<Key> = []
        var frontier = [key]
        while let parent = frontier.popLast() {
            for child in children(of: parent) where result.insert(child).inserted { frontier.append(child) }
        }
        return result
    }

    /// The rows shares made to `user` cover: read-write ones only when `write`; without the shared
    /// records themselves when `childrenOnly`.
    func shared(with user: UUID, write: Bool, childrenOnly: Bool) -> Set<Key> {
        var result: Set<Key> = []
        for (share, value) in shares where share.grantee == user && (!write || value.readWrite) {
            let key = Key(store: share.store, table: share.table, id: share.id)
            guard let row = rows[key], row.owner == value.owner else { continue }
            if !childrenOnly { result.insert(key) }
            result.formUnion(owned(by: key, owner: value.owner))
        }
        return result
    }

    /// Every row `user` can read, by store.
    func readable(by user: UUID) -> Set<Key> {
        Set(rows.filter { $0.value.owner == user }.keys).union(shared(with: user, write: false, childrenOnly: false))
    }

    func canRead(_ user: UUID, _ key: Key) -> Bool {
        guard let row = rows[key] else { return false }
        return row.owner == user || shared(with: user, write: false, childrenOnly: false).contains(key)
    }

    func canWrite(_ user: UUID, _ key: Key) -> Bool {
        guard let row = rows[key] else { return false }
        return row.owner == user || shared(with: user, write: true, childrenOnly: false).contains(key)
    }

    func canDelete(_ user: UUID, _ key: Key) -> Bool {
        guard let row = rows[key] else { return false }
        return row.owner == user || shared(with: user, write: true, childrenOnly: true).contains(key)
    }

    /// The rows of `table` in `store` that `user` may write but does not own.
    func writableNotOwned(by user: UUID, _ store: Int, _ table: Table) -> [Key] {
        rows.filter { $0.key.store == store && $0.key.table == table && $0.value.owner != user && canWrite(user, $0.key) }.keys.sorted()
    }

    /// The rows of `table` in `store` that `user` may read but not write.
    func readOnly(for user: UUID, _ store: Int, _ table: Table) -> [Key] {
        rows.filter { $0.key.store == store && $0.key.table == table && canRead(user, $0.key) && !canWrite(user, $0.key) }.keys.sorted()
    }

    /// The world after rows are deleted: their shares (of the same owner) and links go with them.
    mutating func forget(_ deleted: Set<Key>) {
        for key in deleted {
            let owner = rows[key]?.owner
            shares = shares.filter { share, value in
                !(share.store == key.store && share.table == key.table && share.id == key.id && value.owner == owner)
            }
        }
    }
}
