import Foundation
@_spi(PGModelInternals) import PGModelCore

/// History changes that are all plain inserts of one class and one owner, for
/// ``HistorySQL/insertChanges(transactionID:inserts:)``: only their row ids vary, so they are one array
/// parameter instead of the nine of ``HistoryChangeColumns`` — a bulk save's history chunk without
/// 20,000 copies of its class name, of `insert` and of empty values to encode and for PostgreSQL to parse.
///
/// ```swift
/// let inserts = HistoryInsertColumns(entity: "Trip", owner: nil, rowIDs: [id1, id2])
/// ```
@_spi(PGModelInternals) public struct HistoryInsertColumns: Sendable, Equatable {
    /// The inserted rows' class.
    public var entity: String
    /// The inserted rows' owner; nil on the direct store.
    public var owner: UUID?
    var rowIDs: [PGValue]

    /// How many inserts the columns hold.
    public var count: Int { rowIDs.count }

    public init(entity: String, owner: UUID?, rowIDs: [UUID]) {
        self.entity = entity
        self.owner = owner
        self.rowIDs = rowIDs.map(PGValue.uuid)
    }

    /// Columns whose ids are already values: a caller building a large chunk appends them in place.
    public init(entity: String, owner: UUID?, capacity: Int) {
        self.entity = entity
        self.owner = owner
        rowIDs = []
        rowIDs.reserveCapacity(capacity)
    }

    /// Appends one inserted row's id.
    public mutating func append(_ rowID: UUID) {
        rowIDs.append(.uuid(rowID))
    }
}
