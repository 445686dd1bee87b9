import Foundation
@_spi(PGModelInternals) import PGModelCore

/// The wire form of a ``HistoryPage``: the core type's own keys, but row ids in lowercase like every
/// other id on the wire (Foundation would write them in uppercase). Decoding uses `HistoryPage` itself,
/// which accepts either case.
///
/// ```swift
/// try c.encode(WireHistoryPage(page), forKey: DynamicKey("history"))
/// // {"transactions":[{"changes":[{"id":"0193a7c4-…",…}],…}]}
/// ```
struct WireHistoryPage: Encodable {
    var page: HistoryPage

    init(_ page: HistoryPage) { self.page = page }

    private enum PageKeys: String, CodingKey { case transactions }
    private enum RecordKeys: String, CodingKey {
        case token, transactionIdentifier, author, userName, timestamp, changes, storeIdentifier, bundleIdentifier, processIdentifier
    }
    private enum ChangeKeys: String, CodingKey {
        case changeIdentifier, kind, entity, id, updatedAttributes, values, tombstone
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: PageKeys.self)
        var records = c.nestedUnkeyedContainer(forKey: .transactions)
        try Self.encode(page.transactions, into: &records)
    }

    /// Appends `transactions` to `records` in the `history` answer's form (a `changes` event carries them too).
    static func encode(_ transactions: [HistoryRecord], into records: inout any UnkeyedEncodingContainer) throws {
        for record in transactions {
            var r = records.nestedContainer(keyedBy: RecordKeys.self)
            try r.encode(record.token, forKey: .token)
            try r.encode(record.transactionIdentifier, forKey: .transactionIdentifier)
            // `null` rather than absent: PROTOCOL.md promises every transaction these keys.
            try r.encode(record.author, forKey: .author)
            try r.encode(record.userName, forKey: .userName)
            try r.encode(record.timestamp, forKey: .timestamp)
            try r.encode(record.storeIdentifier, forKey: .storeIdentifier)
            try r.encode(record.bundleIdentifier, forKey: .bundleIdentifier)
            try r.encode(record.processIdentifier, forKey: .processIdentifier)
            var changes = r.nestedUnkeyedContainer(forKey: .changes)
            for change in record.changes {
                var ch = changes.nestedContainer(keyedBy: ChangeKeys.self)
                try ch.encode(change.changeIdentifier, forKey: .changeIdentifier)
                try ch.encode(change.kind, forKey: .kind)
                try ch.encode(change.entity, forKey: .entity)
                try ch.encode(change.id.uuidString.lowercased(), forKey: .id)
                try ch.encode(change.updatedAttributes, forKey: .updatedAttributes)
                try ch.encode(change.values, forKey: .values)
                try ch.encode(change.tombstone, forKey: .tombstone)
            }
        }
    }
}
