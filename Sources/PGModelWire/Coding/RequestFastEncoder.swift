import Foundation
@_spi(PGModelInternals) import PGModelCore

/// Writes the requests a client sends most — `ping`, `fetch`, `count` and `ids` with a simple
/// predicate, and `save` with inserts, updates and deletes — by hand, as `JSONEncoder` with sorted keys
/// writes them, and declines everything else (``Request/encodedLine()`` then uses `JSONEncoder`).
///
/// `JSONEncoder` is slow on the service's hot path (a point fetch's line, a bulk save). The subset is
/// ``RequestFastDecoder``'s. Tests compare this writer's bytes with `JSONEncoder`'s on thousands of
/// generated requests; a save's strings with escapes may be escaped differently (JSON either way), which
/// a test checks by decoding both.
///
/// ```swift
/// let line = RequestFastEncoder.encode(Request(id: 7, operation: .count(FetchRequest(entity: "Trip"))))
/// // {"entity":"Trip","id":7,"op":"count"}
/// ```
enum RequestFastEncoder {
    private struct Declined: Error {}

    /// The line without its `"\n"`, or nil when the request is outside the subset.
    static func encode(_ request: Request) -> Data? {
        encodeBytes(request).map { Data($0) }
    }

    /// ``encode(_:)``'s bytes, before any copy.
    static func encodeBytes(_ request: Request) -> [UInt8]? {
        var writer = JSONWriter()
        writer.reserve(160)
        do {
            switch request.operation {
            case .ping:
                guard request.readAfter == nil else { return nil }
                writer.raw("{\"id\":")
                try id(request.id, &writer)
                writer.raw(",\"op\":\"ping\"")
                try timeout(request, &writer)
                writer.byte(UInt8(ascii: "}"))
            case .fetch(let fetch):
                try self.fetch(fetch, request, op: "fetch", format: false, &writer)
            case .fetchTable(let fetch):
                try self.fetch(fetch, request, op: "fetch", format: true, &writer)
            case .count(let fetch):
                try self.fetch(fetch, request, op: "count", format: false, &writer)
            case .ids(let fetch):
                try self.fetch(fetch, request, op: "ids", format: false, &writer)
            case .save(let save):
                guard request.readAfter == nil else { return nil }
                try self.save(save, request, &writer)
            default:
                return nil
            }
        } catch {
            return nil
        }
        return writer.bytes
    }

    /// `,"timeoutMs":n` when the request has a timeout, then `,"traceparent":…` and `,"tracestate":…` when
    /// it carries a trace context: the three sort next to each other, before `updates` and `where`.
    private static func timeout(_ request: Request, _ writer: inout JSONWriter) throws {
        if let milliseconds = request.timeoutMilliseconds {
            writer.raw(",\"timeoutMs\":")
            writer.integer(milliseconds)
        }
        if let traceParent = request.traceParent {
            writer.raw(",\"traceparent\":")
            try string(traceParent, &writer)
        }
        if let traceState = request.traceState {
            writer.raw(",\"tracestate\":")
            try string(traceState, &writer)
        }
    }

    /// The keys in `JSONEncoder`'s sorted order: entity, format, id, limit, offset, op, properties, readAfter, sort, timeoutMs,
    /// traceparent, tracestate, where.
    private static func fetch(_ fetch: FetchRequest, _ request: Request, op: StaticString, format: Bool,
                              _ writer: inout JSONWriter) throws {
        let requestID = request.id
        guard fetch.identifiers == nil, fetch.related == nil, fetch.after == nil, fetch.ownership == nil else { throw Declined() }
        writer.raw("{\"entity\":")
        try string(fetch.entity, &writer)
        if format { writer.raw(",\"format\":\"table\"") }
        writer.raw(",\"id\":")
        try id(requestID, &writer)
        if let limit = fetch.limit {
            writer.raw(",\"limit\":")
            writer.integer(Int64(limit))
        }
        if let offset = fetch.offset {
            writer.raw(",\"offset\":")
            writer.integer(Int64(offset))
        }
        writer.raw(",\"op\":\"")
        writer.raw(op)
        writer.byte(UInt8(ascii: "\""))
        if let properties = fetch.properties {
            writer.raw(",\"properties\":[")
            for (index, name) in properties.enumerated() {
                if index > 0 { writer.byte(UInt8(ascii: ",")) }
                try string(name, &writer)
            }
            writer.byte(UInt8(ascii: "]"))
        }
        if let readAfter = request.readAfter {
            writer.raw(",\"readAfter\":")
            try string(readAfter.description, &writer)
        }
        if !fetch.sort.isEmpty {
            writer.raw(",\"sort\":[")
            for (index, key) in fetch.sort.enumerated() {
                guard key.field == nil else { throw Declined() }
                if index > 0 { writer.byte(UInt8(ascii: ",")) }
                writer.raw("{\"key\":")
                try string(key.key, &writer)
                if !key.ascending { writer.raw(",\"order\":\"reverse\"") }
                writer.byte(UInt8(ascii: "}"))
            }
            writer.byte(UInt8(ascii: "]"))
        }
        try timeout(request, &writer)
        if let predicate = fetch.predicate {
            writer.raw(",\"where\":")
            try expression(predicate, depth: 0, &writer)
        }
        writer.byte(UInt8(ascii: "}"))
    }

    /// The keys in `JSONEncoder`'s sorted order: author, bundleIdentifier, deletes, id, inserts, mergePolicy,
    /// mergeRules, op, part, parts, processIdentifier, timeoutMs, traceparent, tracestate, updates.
    private static func save(_ save: SaveRequest, _ request: Request, _ writer: inout JSONWriter) throws {
        guard save.links.isEmpty, save.batchDeletes.isEmpty, save.shares.isEmpty else { throw Declined() }
        // Roughly what a row of ten short values takes, so a large save grows its buffer a few times at most.
        writer.reserve(64 + (save.inserts.count + save.updates.count) * 256 + save.deletes.count * 80)
        writer.byte(UInt8(ascii: "{"))
        if let author = save.author {
            writer.raw("\"author\":")
            writer.string(author)
            writer.byte(UInt8(ascii: ","))
        }
        if let bundle = save.bundleIdentifier {
            writer.raw("\"bundleIdentifier\":")
            writer.string(bundle)
            writer.byte(UInt8(ascii: ","))
        }
        writer.raw("\"deletes\":[")
        for (index, reference) in save.deletes.enumerated() {
            if index > 0 { writer.byte(UInt8(ascii: ",")) }
            writer.byte(UInt8(ascii: "{"))
            if let ancestor = reference.ancestor {
                try values(ancestor, key: "ancestor", &writer)
                writer.byte(UInt8(ascii: ","))
            }
            writer.raw("\"entity\":")
            writer.string(reference.entity)
            writer.raw(",\"id\":")
            writer.uuidString(reference.id)
            writer.byte(UInt8(ascii: "}"))
        }
        writer.raw("],\"id\":")
        try id(request.id, &writer)
        writer.raw(",\"inserts\":")
        try rows(save.inserts, &writer)
        if save.mergePolicy != .error {
            writer.raw(",\"mergePolicy\":")
            writer.string(save.mergePolicy.rawValue)
        }
        if !save.mergeRules.isEmpty {
            writer.raw(",\"mergeRules\":{")
            for (index, (entity, rules)) in save.mergeRules.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { writer.byte(UInt8(ascii: ",")) }
                writer.string(entity)
                writer.raw(":{")
                for (position, (attribute, rule)) in rules.sorted(by: { $0.key < $1.key }).enumerated() {
                    if position > 0 { writer.byte(UInt8(ascii: ",")) }
                    writer.string(attribute)
                    writer.byte(UInt8(ascii: ":"))
                    writer.string(rule.rawValue)
                }
                writer.byte(UInt8(ascii: "}"))
            }
            writer.byte(UInt8(ascii: "}"))
        }
        writer.raw(",\"op\":\"save\"")
        if let part = request.part {
            writer.raw(",\"part\":")
            writer.integer(Int64(part.index))
            writer.raw(",\"parts\":")
            writer.integer(Int64(part.count))
        }
        if let process = save.processIdentifier {
            writer.raw(",\"processIdentifier\":")
            writer.string(process)
        }
        try timeout(request, &writer)
        writer.raw(",\"updates\":")
        try rows(save.updates, &writer)
        writer.byte(UInt8(ascii: "}"))
    }

    /// `[{"entity":…,"id":…,"values":{…}}, …]`, each row's values in sorted key order.
    private static func rows(_ rows: [RowValues], _ writer: inout JSONWriter) throws {
        var sorted: (keys: RowKeys, order: [Int])?
        writer.byte(UInt8(ascii: "["))
        for (index, row) in rows.enumerated() {
            guard row.via == nil else { throw Declined() }
            if index > 0 { writer.byte(UInt8(ascii: ",")) }
            writer.byte(UInt8(ascii: "{"))
            if let ancestor = row.ancestor {
                try values(ancestor, key: "ancestor", &writer)
                writer.byte(UInt8(ascii: ","))
            }
            writer.raw("\"entity\":")
            writer.string(row.entity)
            writer.raw(",\"id\":")
            writer.uuidString(row.id)
            writer.raw(",\"values\":{")
            if let (keys, values) = row.positionalValues {
                // A bulk save's rows share their keys: their sorted order is found once, not per row.
                let order: [Int]
                if let sorted, sorted.keys === keys {
                    order = sorted.order
                } else {
                    order = sortedPositions(keys)
                    sorted = (keys, order)
                }
                for (position, index) in order.enumerated() {
                    if position > 0 { writer.byte(UInt8(ascii: ",")) }
                    writer.string(keys.names[index])
                    writer.byte(UInt8(ascii: ":"))
                    try writer.value(values[index])
                }
            } else {
                for (position, entry) in row.values.sorted(by: { $0.key < $1.key }).enumerated() {
                    if position > 0 { writer.byte(UInt8(ascii: ",")) }
                    writer.string(entry.key)
                    writer.byte(UInt8(ascii: ":"))
                    try writer.value(entry.value)
                }
            }
            writer.raw("}}")
        }
        writer.byte(UInt8(ascii: "]"))
    }

    /// `"key":{…}`, the values in sorted key order.
    private static func values(_ values: [String: PGValue], key: String, _ writer: inout JSONWriter) throws {
        writer.string(key)
        writer.raw(":{")
        for (position, entry) in values.sorted(by: { $0.key < $1.key }).enumerated() {
            if position > 0 { writer.byte(UInt8(ascii: ",")) }
            writer.string(entry.key)
            writer.byte(UInt8(ascii: ":"))
            try writer.value(entry.value)
        }
        writer.byte(UInt8(ascii: "}"))
    }

    /// The positions of `keys`' names in sorted order, each name once (its first position), as
    /// ``RowValues/values`` and `JSONEncoder` with sorted keys would write them.
    static func sortedPositions(_ keys: RowKeys) -> [Int] {
        keys.names.indices.filter { keys.positions[keys.names[$0]] == $0 }.sorted { keys.names[$0] < keys.names[$1] }
    }

    private static func id(_ id: RequestID, _ writer: inout JSONWriter) throws {
        switch id {
        case .int(let number): writer.integer(number)
        case .string(let text): try string(text, &writer)
        }
    }

    /// Strings that need no escape: `JSONEncoder`'s escapes are left to it.
    private static func string(_ text: String, _ writer: inout JSONWriter) throws {
        guard !text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
            throw Declined()
        }
        writer.string(text)
    }

    private static func expression(_ expression: QueryExpression, depth: Int, _ writer: inout JSONWriter) throws {
        guard depth < RequestFastDecoder.maximumDepth else { throw Declined() }
        switch expression {
        case .key(let name):
            writer.raw("{\"key\":")
            try string(name, &writer)
            writer.byte(UInt8(ascii: "}"))
        case .value(let value):
            writer.raw("{\"value\":")
            switch value {
            case .null, .bool, .int, .uuid, .date: try writer.value(value)
            case .string(let text): try string(text, &writer)
            case .double, .decimal, .data: throw Declined()
            }
            writer.byte(UInt8(ascii: "}"))
        case .compare(let op, let lhs, let rhs):
            writer.raw("{\"")
            op.rawValue.utf8.forEach { writer.byte($0) }
            writer.raw("\":")
            try list([lhs, rhs], depth: depth, &writer)
            writer.byte(UInt8(ascii: "}"))
        case .and(let operands):
            writer.raw("{\"and\":")
            try list(operands, depth: depth, &writer)
            writer.byte(UInt8(ascii: "}"))
        case .or(let operands):
            writer.raw("{\"or\":")
            try list(operands, depth: depth, &writer)
            writer.byte(UInt8(ascii: "}"))
        case .not(let operand):
            writer.raw("{\"not\":")
            try self.expression(operand, depth: depth + 1, &writer)
            writer.byte(UInt8(ascii: "}"))
        default:
            throw Declined()
        }
    }

    private static func list(_ operands: [QueryExpression], depth: Int, _ writer: inout JSONWriter) throws {
        writer.byte(UInt8(ascii: "["))
        for (index, operand) in operands.enumerated() {
            if index > 0 { writer.byte(UInt8(ascii: ",")) }
            try expression(operand, depth: depth + 1, &writer)
        }
        writer.byte(UInt8(ascii: "]"))
    }
}
