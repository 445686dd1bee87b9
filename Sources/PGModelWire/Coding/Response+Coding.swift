import Foundation
import NIOCore
@_spi(PGModelInternals) import PGModelCore

extension Response: Codable {
    /// This response as one line, `"\n"` included. Fails only for values JSON cannot carry (NaN, infinity).
    ///
    /// ```swift
    /// let data = try Response(id: 1, .pong).encodedLine()   // {"id":1,"ok":true,"pong":true}\n
    /// ```
    public func encodedLine() throws -> Data {
        // The lines that can hold millions of values (a fetch's table, a save's stored rows) are written by
        // hand (same JSON, sorted keys).
        switch result {
        case .success(.table(let table)): return try WireTable.encodeLine(id: id, table: table)
        case .success(.saved(let saved)): return try WireSaveAnswer.encodeLine(id: id, result: saved)
        default: return try WireJSON.encodeLine(self)
        }
    }

    /// ``encodedLine()`` as the buffer a channel writes: a large `table` answer is copied into it once
    /// from the writer's bytes, not into `Data` and then again.
    ///
    /// ```swift
    /// try await outbound.write(try response.encodedLineBuffer())
    /// ```
    public func encodedLineBuffer() throws -> ByteBuffer {
        switch result {
        case .success(.table(let table)): return try WireTable.encodeLineBuffer(id: id, table: table)
        case .success(.saved(let saved)): return try WireSaveAnswer.encodeLineBuffer(id: id, result: saved)
        default: return ByteBuffer(bytes: try WireJSON.encodeLine(self))
        }
    }

    private enum Field: String {
        case id, ok, error, server, user, userID, admin, maxLineBytes, maxSaveBytes, store, held, pong, entities, rows, table, count, ids, remapped, deleted, merged, dropped, stored, commitLSN, history, subscription, shares, owner
        var key: DynamicKey { DynamicKey(rawValue) }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: DynamicKey.self)
        let id = try c.decodeIfPresent(RequestID.self, forKey: Field.id.key)
        guard try c.decode(Bool.self, forKey: Field.ok.key) else {
            self.init(id: id, error: try c.decode(WireError.self, forKey: Field.error.key))
            return
        }
        // Each op's result has its own keys, so the keys present tell which result this is.
        if c.contains(Field.server.key) {
            self.init(id: id, .hello(HelloResult(
                server: try c.decode(String.self, forKey: Field.server.key),
                user: try c.decode(String.self, forKey: Field.user.key),
                userID: try c.decode(UUID.self, forKey: Field.userID.key),
                isAdmin: try c.decodeIfPresent(Bool.self, forKey: Field.admin.key) ?? false,
                maxLineBytes: try c.decodeIfPresent(Int.self, forKey: Field.maxLineBytes.key),
                maxSaveBytes: try c.decodeIfPresent(Int.self, forKey: Field.maxSaveBytes.key),
                store: try c.decodeIfPresent(String.self, forKey: Field.store.key))))
        } else if c.contains(Field.held.key) {
            self.init(id: id, .held(try c.decode(Int.self, forKey: Field.held.key)))
        } else if c.contains(Field.pong.key) {
            self.init(id: id, .pong)
        } else if c.contains(Field.entities.key) {
            self.init(id: id, .registered(entities: try c.decode([String].self, forKey: Field.entities.key)))
        } else if c.contains(Field.rows.key) {
            self.init(id: id, .rows(try c.decode([WireRow].self, forKey: Field.rows.key).map(\.row)))
        } else if c.contains(Field.table.key) {
            // Well-formed tables take WireTable's path before this decoder is tried.
            self.init(id: id, .table(try c.decode(WireTableBody.self, forKey: Field.table.key).table))
        } else if c.contains(Field.count.key) {
            self.init(id: id, .count(try c.decode(Int.self, forKey: Field.count.key)))
        } else if c.contains(Field.ids.key) {
            self.init(id: id, .ids(try c.decode([WireReference].self, forKey: Field.ids.key).map(\.reference)))
        } else if c.contains(Field.remapped.key) {
            let texts = try c.decode([String: String].self, forKey: Field.remapped.key)
            var remapped: [UUID: UUID] = [:]
            for (old, new) in texts {
                guard let oldID = UUID(uuidString: old), let newID = UUID(uuidString: new) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: Field.remapped.key, in: c, debugDescription: "remapped maps UUIDs to UUIDs")
                }
                remapped[oldID] = newID
            }
            let deleted = try c.decodeIfPresent([WireReference].self, forKey: Field.deleted.key)?.map(\.reference) ?? []
            let merged = try c.decodeIfPresent([WireRow].self, forKey: Field.merged.key)?.map(\.row) ?? []
            let dropped = try c.decodeIfPresent([WireReference].self, forKey: Field.dropped.key)?.map(\.reference) ?? []
            // Absent from an older server's answer: the saving context then shows only what the save wrote.
            let stored = try c.decodeIfPresent(WireTableBody.self, forKey: Field.stored.key)?.table ?? FetchedTable()
            var result = SaveResult(remappedIdentifiers: remapped, deleted: deleted, merged: merged, dropped: dropped, stored: stored)
            // Absent from an older server's answer, and for a save that wrote nothing.
            if let text = try c.decodeIfPresent(String.self, forKey: Field.commitLSN.key) {
                guard let position = LogSequenceNumber(text) else {
                    throw DecodingError.dataCorruptedError(forKey: Field.commitLSN.key, in: c, debugDescription: "commitLSN is a WAL position such as \"0/16B3748\"")
                }
                result.commitLSN = position
            }
            self.init(id: id, .saved(result))
        } else if c.contains(Field.history.key) {
            self.init(id: id, .history(try c.decode(HistoryPage.self, forKey: Field.history.key)))
        } else if c.contains(Field.subscription.key) {
            self.init(id: id, .subscribed(try c.decode(RequestID.self, forKey: Field.subscription.key)))
        } else if c.contains(Field.shares.key) {
            self.init(id: id, .shares(RecordSharing(owner: try c.decodeIfPresent(String.self, forKey: Field.owner.key),
                                                    shares: try c.decode([ModelShare].self, forKey: Field.shares.key))))
        } else {
            self.init(id: id, .acknowledged)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: DynamicKey.self)
        if let id {
            try c.encode(id, forKey: Field.id.key)
        } else {
            try c.encodeNil(forKey: Field.id.key)
        }
        switch result {
        case .failure(let error):
            try c.encode(false, forKey: Field.ok.key)
            try c.encode(error, forKey: Field.error.key)
        case .success(let value):
            try c.encode(true, forKey: Field.ok.key)
            switch value {
            case .hello(let hello):
                try c.encode(hello.server, forKey: Field.server.key)
                try c.encode(hello.user, forKey: Field.user.key)
                try c.encode(hello.userID.uuidString.lowercased(), forKey: Field.userID.key)
                try c.encode(hello.isAdmin, forKey: Field.admin.key)
                try c.encodeIfPresent(hello.maxLineBytes, forKey: Field.maxLineBytes.key)
                try c.encodeIfPresent(hello.maxSaveBytes, forKey: Field.maxSaveBytes.key)
                try c.encodeIfPresent(hello.store, forKey: Field.store.key)
            case .held(let parts):
                try c.encode(parts, forKey: Field.held.key)
            case .pong:
                try c.encode(true, forKey: Field.pong.key)
            case .registered(let entities):
                try c.encode(entities, forKey: Field.entities.key)
            case .rows(let rows):
                try c.encode(rows.map(WireRow.init), forKey: Field.rows.key)
            case .table(let table):
                try c.encode(WireTableBody(table), forKey: Field.table.key)
            case .count(let count):
                try c.encode(count, forKey: Field.count.key)
            case .ids(let ids):
                try c.encode(ids.map(WireReference.init), forKey: Field.ids.key)
            case .saved(let result):
                var texts: [String: String] = [:]
                for (old, new) in result.remappedIdentifiers {
                    texts[old.uuidString.lowercased()] = new.uuidString.lowercased()
                }
                try c.encode(texts, forKey: Field.remapped.key)
                if !result.deleted.isEmpty {
                    try c.encode(result.deleted.map(WireReference.init), forKey: Field.deleted.key)
                }
                if !result.merged.isEmpty { try c.encode(result.merged.map(WireRow.init), forKey: Field.merged.key) }
                if !result.dropped.isEmpty { try c.encode(result.dropped.map(WireReference.init), forKey: Field.dropped.key) }
                if !result.stored.rows.isEmpty { try c.encode(WireTableBody(result.stored), forKey: Field.stored.key) }
                try c.encodeIfPresent(result.commitLSN?.description, forKey: Field.commitLSN.key)
            case .acknowledged:
                break
            case .history(let page):
                try c.encode(WireHistoryPage(page), forKey: Field.history.key)
            case .subscribed(let subscription):
                try c.encode(subscription, forKey: Field.subscription.key)
            case .shares(let sharing):
                try c.encode(sharing.shares, forKey: Field.shares.key)
                try c.encode(sharing.owner, forKey: Field.owner.key)
            }
        }
    }
}
