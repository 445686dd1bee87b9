import Logging
import NIOCore
@_spi(PGModelInternals) import PGModelIO
import PostgresNIO

/// A fetch's select as a named prepared statement of slot `High * 16 + Low` (``PreparedSelectRegistry``):
/// one Swift type per slot, as PostgresNIO names prepared statements by type.
///
/// ```swift
/// let rows = try await PreparedSelectSlots.rows(slot: 3, bindings: binds, budget: nil, on: connection, logger: logger)
/// ```
struct PreparedSelect<High: PreparedSelectDigit, Low: PreparedSelectDigit>: PostgresPreparedStatement {
    typealias Row = PostgresRow

    static var slot: Int { High.value * 16 + Low.value }
    static var name: String { "pgmodel_select_\(slot)" }
    static var sql: String { PreparedSelectRegistry.shared.entry(slot).sql }
    static var bindingDataTypes: [PostgresDataType] { PreparedSelectRegistry.shared.entry(slot).types }

    let bindings: PostgresBindings

    func makeBindings() throws -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

/// A hexadecimal digit as a type: two of them name a ``PreparedSelect`` slot.
protocol PreparedSelectDigit: Sendable { static var value: Int { get } }
enum PreparedSelectDigit0: PreparedSelectDigit { static var value: Int { 0 } }
enum PreparedSelectDigit1: PreparedSelectDigit { static var value: Int { 1 } }
enum PreparedSelectDigit2: PreparedSelectDigit { static var value: Int { 2 } }
enum PreparedSelectDigit3: PreparedSelectDigit { static var value: Int { 3 } }
enum PreparedSelectDigit4: PreparedSelectDigit { static var value: Int { 4 } }
enum PreparedSelectDigit5: PreparedSelectDigit { static var value: Int { 5 } }
enum PreparedSelectDigit6: PreparedSelectDigit { static var value: Int { 6 } }
enum PreparedSelectDigit7: PreparedSelectDigit { static var value: Int { 7 } }
enum PreparedSelectDigit8: PreparedSelectDigit { static var value: Int { 8 } }
enum PreparedSelectDigit9: PreparedSelectDigit { static var value: Int { 9 } }
enum PreparedSelectDigit10: PreparedSelectDigit { static var value: Int { 10 } }
enum PreparedSelectDigit11: PreparedSelectDigit { static var value: Int { 11 } }
enum PreparedSelectDigit12: PreparedSelectDigit { static var value: Int { 12 } }
enum PreparedSelectDigit13: PreparedSelectDigit { static var value: Int { 13 } }
enum PreparedSelectDigit14: PreparedSelectDigit { static var value: Int { 14 } }
enum PreparedSelectDigit15: PreparedSelectDigit { static var value: Int { 15 } }

extension PreparedSelect where High == PreparedSelectDigit0, Low == PreparedSelectDigit0 {
    /// The number of slots: 16 × 16.
    static var slotCount: Int { 256 }

    private static let digits: [any PreparedSelectDigit.Type] = [
        PreparedSelectDigit0.self, PreparedSelectDigit1.self, PreparedSelectDigit2.self, PreparedSelectDigit3.self,
        PreparedSelectDigit4.self, PreparedSelectDigit5.self, PreparedSelectDigit6.self, PreparedSelectDigit7.self,
        PreparedSelectDigit8.self, PreparedSelectDigit9.self, PreparedSelectDigit10.self, PreparedSelectDigit11.self,
        PreparedSelectDigit12.self, PreparedSelectDigit13.self, PreparedSelectDigit14.self, PreparedSelectDigit15.self,
    ]

    /// Starts slot `slot`'s statement with `bindings` on `connection`; the future has every row.
    /// PostgresNIO prepares it on the connection first if it has not yet.
    static func start(slot: Int, bindings: PostgresBindings, budget: Int?, on connection: PostgresConnection, logger: Logger) -> EventLoopFuture<[PostgresRow]> {
        let promise = connection.eventLoop.makePromise(of: [PostgresRow].self)
        // On the connection's event loop: no hop to another thread, and nothing that needs the cooperative
        // pool, which threads waiting in synchronous calls may fill.
        Task(executorPreference: EventLoopTaskExecutor(eventLoop: connection.eventLoop)) {
            do {
                promise.succeed(try await rows(slot: slot, bindings: bindings, budget: budget, on: connection, logger: logger))
            } catch {
                promise.fail(error)
            }
        }
        return promise.futureResult
    }

    /// Runs slot `slot`'s statement with `bindings` on `connection` and returns every row.
    static func rows(slot: Int, bindings: PostgresBindings, budget: Int?, on connection: PostgresConnection, logger: Logger) async throws -> [PostgresRow] {
        // Each call on an existential metatype opens it: the high digit's type, then the low one's.
        try await digits[(slot / 16) & 15].rows(low: digits[slot & 15], bindings, budget, connection, logger)
    }
}

extension PreparedSelectDigit {
    fileprivate static func rows(low: any PreparedSelectDigit.Type, _ bindings: PostgresBindings, _ budget: Int?,
                                 _ connection: PostgresConnection, _ logger: Logger) async throws -> [PostgresRow] {
        try await low.rows(high: Self.self, bindings, budget, connection, logger)
    }

    fileprivate static func rows<High: PreparedSelectDigit>(high: High.Type, _ bindings: PostgresBindings, _ budget: Int?,
                                                           _ connection: PostgresConnection, _ logger: Logger) async throws -> [PostgresRow] {
        var rows: [PostgresRow] = []
        var bytes = 0
        for try await row in try await connection.execute(PreparedSelect<High, Self>(bindings: bindings), logger: logger) {
            if let budget {
                try PostgresStoreEngine.append(row, to: &rows, bytes: &bytes, budget: budget, model: nil)
            } else {
                rows.append(row)
            }
        }
        return rows
    }
}

/// The slots' family, for ``PreparedSelectRegistry``.
typealias PreparedSelectSlots = PreparedSelect<PreparedSelectDigit0, PreparedSelectDigit0>
