@_spi(PGModelInternals) import PGModelCore
import PostgresNIO
import Testing
@_spi(PGModelInternals) @testable import PGModelPostgres

/// Each distinct select — its SQL and its parameters' types — keeps one statement name for good; past
/// the capacity the rest run unnamed.
@Suite("PreparedSelectRegistry")
struct PreparedSelectRegistryTests {
    @Test func aSelectKeepsItsSlotAndAnotherTypeIsAnotherStatement() {
        let registry = PreparedSelectRegistry()
        let first = registry.slot(sql: "SELECT 1 WHERE $1", types: [.bool])
        #expect(first == 0)
        #expect(registry.slot(sql: "SELECT 1 WHERE $1", types: [.bool]) == 0)
        // The same text bound with another type is parsed with that type: another statement.
        #expect(registry.slot(sql: "SELECT 1 WHERE $1", types: [.int8]) == 1)
        #expect(registry.slot(sql: "SELECT 2", types: []) == 2)
        #expect(registry.entry(1) == PreparedSelectRegistry.Entry(sql: "SELECT 1 WHERE $1", types: [.int8]))
        #expect(registry.count == 3)
    }

    @Test func pastItsCapacityNoSlotIsGivenAndTheTakenOnesStay() {
        let registry = PreparedSelectRegistry()
        for i in 0..<PreparedSelectRegistry.capacity {
            #expect(registry.slot(sql: "SELECT \(i)", types: []) == i)
        }
        #expect(registry.slot(sql: "SELECT 'one more'", types: []) == nil)
        #expect(registry.slot(sql: "SELECT 7", types: []) == 7)
    }

    @Test func everySlotHasItsOwnStatementName() {
        // PostgresNIO keys a connection's prepared statements by name: two slots must never share one.
        #expect(PreparedSelect<PreparedSelectDigit0, PreparedSelectDigit0>.name == "pgmodel_select_0")
        #expect(PreparedSelect<PreparedSelectDigit1, PreparedSelectDigit0>.name == "pgmodel_select_16")
        #expect(PreparedSelect<PreparedSelectDigit15, PreparedSelectDigit15>.name == "pgmodel_select_255")
        #expect(PreparedSelectSlots.slotCount == PreparedSelectRegistry.capacity)
    }

    @Test func preparationFailuresAndDeadPlansCloseTheConnection() {
        let timeout = PGModelError(.timeout, "statement timeout", sqlState: "57014")
        // The first run on a connection may have failed while preparing: PostgresNIO keeps that failure.
        #expect(PostgresStoreEngine.leavesStatementUnusable(timeout, wasPrepared: false))
        #expect(!PostgresStoreEngine.leavesStatementUnusable(timeout, wasPrepared: true))
        #expect(PostgresStoreEngine.leavesStatementUnusable(PGModelError(.databaseError, "cached plan must not change result type", sqlState: "0A000"), wasPrepared: true))
        #expect(PostgresStoreEngine.leavesStatementUnusable(PGModelError(.databaseError, "prepared statement does not exist", sqlState: "26000"), wasPrepared: true))
        #expect(!PostgresStoreEngine.leavesStatementUnusable(PGModelError(.typeMismatch, "bad value", sqlState: "22P02"), wasPrepared: true))
    }
}
