import Foundation
@_spi(PGModelInternals) import PGModelCore

/// The changes of one history transaction as columns, one array parameter each, for
/// ``HistorySQL/insertChanges(transactionID:columns:)``: one statement whatever the number of changes,
/// without building one JSON document of them all.
///
/// ```swift
/// var columns = HistoryChangeColumns(capacity: 1)
/// columns.append(entity: "Trip", rowID: id, kind: "update", owner: nil, updatedAttributes: ["name"],
///                newValues: #"{"name":"Rome"}"#, tombstone: nil, audience: nil, audienceOnly: false)
/// ```
@_spi(PGModelInternals) public struct HistoryChangeColumns: Sendable, Equatable {
    /// How many changes the columns hold.
    public private(set) var count = 0
    var entities: [PGValue] = []
    var rowIDs: [PGValue] = []
    var kinds: [PGValue] = []
    var owners: [PGValue] = []
    /// Each row's attribute names as a PostgreSQL `text[]` literal, NULL for none.
    var updatedAttributes: [PGValue] = []
    /// JSON objects (`jsonb` text), NULL where the change has none.
    var newValues: [PGValue] = []
    /// JSON objects (`jsonb` text) of the values an update replaced, NULL where the change has none.
    var previousValues: [PGValue] = []
    var tombstones: [PGValue] = []
    /// Each row's audience as a `uuid[]` literal, NULL for none.
    var audiences: [PGValue] = []
    var audienceOnly: [PGValue] = []

    public init(capacity: Int = 0) {
        for keyPath in [\Self.entities, \.rowIDs, \.kinds, \.owners, \.updatedAttributes, \.newValues, \.previousValues, \.tombstones, \.audiences, \.audienceOnly] {
            self[keyPath: keyPath].reserveCapacity(capacity)
        }
    }

    /// Appends one change. `newValues` and `tombstone` are JSON object text (or nil for none).
    public mutating func append(entity: String, rowID: UUID, kind: String, owner: UUID?, updatedAttributes: [String],
                                newValues: String?, previousValues: String? = nil, tombstone: String?, audience: [UUID]?, audienceOnly: Bool) {
        count += 1
        entities.append(.string(entity))
        rowIDs.append(.uuid(rowID))
        kinds.append(.string(kind))
        owners.append(owner.map(PGValue.uuid) ?? .null)
        self.updatedAttributes.append(updatedAttributes.isEmpty ? .null : .string(Self.textArrayLiteral(updatedAttributes)))
        self.newValues.append(newValues.map(PGValue.string) ?? .null)
        self.previousValues.append(previousValues.map(PGValue.string) ?? .null)
        tombstones.append(tombstone.map(PGValue.string) ?? .null)
        if let audience, !audience.isEmpty {
            audiences.append(.string("{" + audience.map { $0.uuidString.lowercased() }.joined(separator: ",") + "}"))
        } else {
            audiences.append(.null)
        }
        self.audienceOnly.append(.bool(audienceOnly))
    }

    /// `{"a","b"}`: every element quoted, so no name (whatever its characters) changes the array's shape.
    static func textArrayLiteral(_ strings: [String]) -> String {
        "{" + strings.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
            .joined(separator: ",") + "}"
    }
}
