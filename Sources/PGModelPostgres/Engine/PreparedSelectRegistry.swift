import NIOConcurrencyHelpers
import PostgresNIO

/// The process's named fetch statements: each distinct select (its SQL and its parameters' types) gets
/// a slot once, for good, and every connection prepares a slot's statement the first time it runs it.
///
/// PostgreSQL parses and plans an unnamed statement on every call, which is most of a point fetch's
/// database time. A named
/// one is parsed once per connection and, after five runs, planned once. PostgresNIO's
/// public API names a prepared statement by a Swift type (``PreparedSelect``), so the slots are a fixed
/// set of types whose SQL this registry supplies; past ``capacity`` distinct selects the rest run unnamed.
///
/// ```swift
/// if let slot = PreparedSelectRegistry.shared.slot(sql: sql, types: [.int8]) { … run PreparedSelect slot `slot` … }
/// ```
package final class PreparedSelectRegistry: Sendable {
    package static let shared = PreparedSelectRegistry()

    /// How many distinct selects get a name: bounds each connection's prepared statements in PostgreSQL.
    package static let capacity = PreparedSelectSlots.slotCount

    package struct Entry: Sendable, Hashable {
        package var sql: String
        package var types: [PostgresDataType]
    }

    private struct State {
        var entries: [Entry] = []
        var slots: [Entry: Int] = [:]
        /// The slots each open connection has run at least once (so prepared), by connection.
        var prepared: [ObjectIdentifier: Set<Int>] = [:]
    }

    private let state = NIOLockedValueBox(State())

    package init() {}

    /// The slot of the select `sql` with parameters of `types`; nil when every slot is taken by others.
    package func slot(sql: String, types: [PostgresDataType]) -> Int? {
        let entry = Entry(sql: sql, types: types)
        return state.withLockedValue { state in
            if let slot = state.slots[entry] { return slot }
            guard state.entries.count < Self.capacity else { return nil }
            state.entries.append(entry)
            state.slots[entry] = state.entries.count - 1
            return state.entries.count - 1
        }
    }

    /// The select of `slot`. A slot is only ever handed out after its entry exists.
    package func entry(_ slot: Int) -> Entry {
        state.withLockedValue { state in
            slot >= 0 && slot < state.entries.count ? state.entries[slot] : Entry(sql: "SELECT NULL WHERE false", types: [])
        }
    }

    /// How many slots are taken.
    package var count: Int { state.withLockedValue { $0.entries.count } }

    /// Whether `connection` has run `slot` successfully: its statement is prepared there.
    func isPrepared(_ slot: Int, on connection: PostgresConnection) -> Bool {
        state.withLockedValue { $0.prepared[ObjectIdentifier(connection)]?.contains(slot) ?? false }
    }

    /// Records that `connection` ran `slot`. The record goes when the connection closes, before another
    /// connection could have its identity.
    func markPrepared(_ slot: Int, on connection: PostgresConnection) {
        let key = ObjectIdentifier(connection)
        let isFirst = state.withLockedValue { state -> Bool in
            let isFirst = state.prepared[key] == nil
            state.prepared[key, default: []].insert(slot)
            return isFirst
        }
        guard isFirst else { return }
        connection.closeFuture.whenComplete { [state] _ in
            _ = state.withLockedValue { $0.prepared.removeValue(forKey: key) }
        }
    }
}
