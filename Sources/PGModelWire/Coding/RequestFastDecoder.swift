import Foundation
@_spi(PGModelInternals) import PGModelCore

/// Reads the requests a client sends most — `ping`, `fetch`, `count` and `ids` with a simple
/// predicate, and `save` with inserts, updates and deletes — by hand, and declines everything else.
///
/// `JSONDecoder` is a large share of what the service adds to a point fetch (its keyed containers,
/// `DynamicKey`s and error bookkeeping). This reader accepts only a strict
/// subset whose meaning is beyond doubt: valid UTF-8, no unknown or repeated keys, strings without
/// escapes, integers without fractions or exponents, expressions made of `key`, `value` (plain, `uuid` or
/// `date`), the six comparisons, `and`, `or` and `not`; a save's rows and references as
/// `RequestFastDecoder+Save.swift` says. On anything else it returns nil and
/// ``Request/decode(line:)-(Data)`` runs the general decoder, which produces the same request (a test
/// compares the two on thousands of lines) or the precise error.
///
/// ```swift
/// let request = RequestFastDecoder.decode(Data(#"{"id":7,"op":"count","entity":"Trip"}"#.utf8))
/// ```
enum RequestFastDecoder {
    /// Nesting deeper than this is left to the general decoder, which enforces the protocol's limit.
    static let maximumDepth = 32

    /// The keys a request this reader takes may have: the cases of its key switch. A key missing here
    /// sends its lines to the general decoder (correct, only slower).
    static let requestKeys = ["id", "op", "format", "entity", "where", "sort", "limit", "offset", "timeoutMs",
                              "properties", "inserts", "updates", "deletes", "author", "part", "parts", "mergePolicy", "mergeRules",
                              "bundleIdentifier", "processIdentifier", "traceparent", "tracestate", "readAfter"]

    static func decode(_ line: UnsafeRawBufferPointer) -> Request? {
        // Once for the whole line, so no string read below can be one `String(decoding:)` repaired.
        guard UTF8Validation.isValid(line) else { return nil }
        var reader = JSONReader(line)
        return try? reader.fastRequest()
    }

    static func decode(_ line: Data) -> Request? {
        line.withUnsafeBytes { decode($0) }
    }
}

extension JSONReader {
    fileprivate mutating func fastRequest() throws -> Request {
        var id: RequestID?
        var op: String?
        var format: String?
        var entity: String?
        var predicate: QueryExpression?
        var sort: [SortKey]?
        var limit: Int?
        var offset: Int?
        var properties: [String]?
        var timeout: Duration?
        var traceParent: String?
        var traceState: String?
        var readAfter: LogSequenceNumber?
        var inserts: [RowValues]?
        var updates: [RowValues]?
        var deletes: [RowReference]?
        var author: String??
        var bundleIdentifier: String??
        var processIdentifier: String??
        var mergePolicy: MergePolicy?
        var mergeRules: [String: [String: MergeRule]]?
        var partIndex: Int?
        var partCount: Int?
        // Which keys came, one bit each, at their index in `requestKeys` (a Set of strings cost a fifth of
        // reading a fetch line).
        var seen: UInt32 = 0
        try expect(UInt8(ascii: "{"))
        if try take(UInt8(ascii: "}")) { throw Unexpected() }
        repeat {
            let key = try plainString()
            guard let index = RequestFastDecoder.requestKeys.firstIndex(of: key), seen & (1 << index) == 0 else { throw Unexpected() }
            seen |= 1 << index
            try expect(UInt8(ascii: ":"))
            switch key {
            case "id":
                if try peek() == UInt8(ascii: "\"") {
                    let text = try plainString()
                    guard text.utf8.count <= WireProtocol.maxStringIDBytes else { throw Unexpected() }
                    id = .string(text)
                } else {
                    id = .int(try integer())
                }
            case "op": op = try plainString()
            case "format": format = try plainString()
            case "entity": entity = try plainString()
            case "where": predicate = try expression(depth: 0)
            case "sort": sort = try sortKeys()
            case "limit": limit = try count()
            case "offset": offset = try count()
            case "timeoutMs":
                let milliseconds = try integer()
                guard WireProtocol.timeoutMillisecondsRange.contains(milliseconds) else { throw Unexpected() }
                timeout = .milliseconds(milliseconds)
            case "traceparent":
                // Too long, escaped or null: the general decoder answers or takes it.
                let text = try plainString()
                guard text.utf8.count <= WireProtocol.maxTraceParentBytes else { throw Unexpected() }
                traceParent = text
            case "tracestate":
                let text = try plainString()
                guard text.utf8.count <= WireProtocol.maxTraceStateBytes else { throw Unexpected() }
                traceState = text
            case "readAfter":
                // Anything but an LSN: the general decoder's precise error.
                guard let position = LogSequenceNumber(try plainString()) else { throw Unexpected() }
                readAfter = position
            case "properties":
                var names: [String] = []
                try expect(UInt8(ascii: "["))
                if !(try take(UInt8(ascii: "]"))) {
                    repeat { names.append(try plainString()) } while try take(UInt8(ascii: ","))
                    try expect(UInt8(ascii: "]"))
                }
                properties = names
            case "inserts": inserts = try saveRows()
            case "updates": updates = try saveRows()
            case "deletes": deletes = try saveReferences()
            case "author": author = try peek() == UInt8(ascii: "n") ? .some(nil) : .some(try string())
            case "bundleIdentifier": bundleIdentifier = try peek() == UInt8(ascii: "n") ? .some(nil) : .some(try string())
            case "processIdentifier": processIdentifier = try peek() == UInt8(ascii: "n") ? .some(nil) : .some(try string())
            case "mergePolicy":
                let name = try plainString()
                guard let policy = MergePolicy(rawValue: name) else { throw Unexpected() }
                mergePolicy = policy
            case "mergeRules":
                var rules: [String: [String: MergeRule]] = [:]
                try object { entity, reader in
                    var byAttribute: [String: MergeRule] = [:]
                    try reader.object { attribute, reader in
                        let name = try reader.plainString()
                        guard let rule = MergeRule(rawValue: name), byAttribute[attribute] == nil else { throw Unexpected() }
                        byAttribute[attribute] = rule
                    }
                    guard rules[entity] == nil else { throw Unexpected() }
                    rules[entity] = byAttribute
                }
                mergeRules = rules
            case "part": partIndex = try count()
            case "parts": partCount = try count()
            default:
                throw Unexpected()
            }
        } while try take(UInt8(ascii: ","))
        try expect(UInt8(ascii: "}"))
        skipSpace()
        guard position == bytes.count, let id, let op else { throw Unexpected() }

        let isSave = inserts != nil || updates != nil || deletes != nil || author != nil || bundleIdentifier != nil
            || processIdentifier != nil || mergePolicy != nil || mergeRules != nil
        if op == "save" {
            guard isSave, readAfter == nil, entity == nil, format == nil, predicate == nil, sort == nil, limit == nil, offset == nil,
                  properties == nil else { throw Unexpected() }
            // Both or neither, in range; anything else gets the general decoder's precise error.
            var part: SavePart?
            if partIndex != nil || partCount != nil {
                guard let partIndex, let partCount else { throw Unexpected() }
                part = SavePart(index: partIndex, count: partCount)
                guard part?.isValid == true else { throw Unexpected() }
            }
            return Request(id: id, operation: .save(SaveRequest(inserts: inserts ?? [], updates: updates ?? [], deletes: deletes ?? [],
                                                                author: author ?? nil, bundleIdentifier: bundleIdentifier ?? nil,
                                                                processIdentifier: processIdentifier ?? nil, mergePolicy: mergePolicy ?? .error,
                                                                mergeRules: mergeRules ?? [:])), timeout: timeout, part: part,
                           traceParent: traceParent, traceState: traceState)
        }
        guard !isSave, partIndex == nil, partCount == nil else { throw Unexpected() }
        if op == "ping" {
            guard readAfter == nil else { throw Unexpected() }
            let optional = (timeout == nil ? 0 : 1) + (traceParent == nil ? 0 : 1) + (traceState == nil ? 0 : 1)
            guard seen.nonzeroBitCount == 2 + optional else { throw Unexpected() }
            return Request(id: id, operation: .ping, timeout: timeout, traceParent: traceParent, traceState: traceState)
        }
        guard let entity else { throw Unexpected() }
        let fetch = FetchRequest(entity: entity, predicate: predicate, sort: sort ?? [], limit: limit, offset: offset,
                                 properties: properties)
        switch (op, format) {
        case ("fetch", nil), ("fetch", "rows"?): return Request(id: id, operation: .fetch(fetch), timeout: timeout, traceParent: traceParent, traceState: traceState, readAfter: readAfter)
        case ("fetch", "table"?): return Request(id: id, operation: .fetchTable(fetch), timeout: timeout, traceParent: traceParent, traceState: traceState, readAfter: readAfter)
        case ("count", nil): return Request(id: id, operation: .count(fetch), timeout: timeout, traceParent: traceParent, traceState: traceState, readAfter: readAfter)
        case ("ids", nil): return Request(id: id, operation: .ids(fetch), timeout: timeout, traceParent: traceParent, traceState: traceState, readAfter: readAfter)
        default: throw Unexpected()
        }
    }

    /// A string without escapes, valid UTF-8.
    mutating func plainString() throws -> String {
        try expect(UInt8(ascii: "\""))
        let start = position
        while position < bytes.count {
            let b = bytes[position]
            if b == UInt8(ascii: "\"") {
                let text = UnsafeRawBufferPointer(rebasing: bytes[start..<position])
                guard UTF8Validation.isValid(text) else { throw Unexpected() }
                position += 1
                return String(decoding: text, as: UTF8.self)
            }
            guard b >= 0x20, b != UInt8(ascii: "\\") else { throw Unexpected() }
            position += 1
        }
        throw Unexpected()
    }

    /// `-?(0|[1-9][0-9]*)` within Int64, followed by something that is not part of a number.
    mutating func integer() throws -> Int64 {
        skipSpace()
        let start = position
        if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
        let digits = position
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
        guard position > digits, position - digits == 1 || bytes[digits] != UInt8(ascii: "0") else { throw Unexpected() }
        if position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): throw Unexpected()
            default: break
            }
        }
        let span = UnsafeRawBufferPointer(rebasing: bytes[start..<position])
        guard let value = Self.integer(span) else { throw Unexpected() }
        return value
    }

    /// A non-negative Int: what `limit` and `offset` may be. Values from 2^53 on are declined: the
    /// general decoder checks their range as doubles, which round there.
    private mutating func count() throws -> Int {
        let value = try integer()
        guard (0..<(1 << 53)).contains(value), let count = Int(exactly: value) else { throw Unexpected() }
        return count
    }

    /// `[{"key":…}, {"key":…,"order":"reverse"}]`; a key with `as` (a field of a document) is declined.
    private mutating func sortKeys() throws -> [SortKey] {
        var keys: [SortKey] = []
        try expect(UInt8(ascii: "["))
        if try take(UInt8(ascii: "]")) { return keys }
        repeat {
            var name: String?
            var order: String?
            try expect(UInt8(ascii: "{"))
            repeat {
                let field = try plainString()
                try expect(UInt8(ascii: ":"))
                switch field {
                case "key" where name == nil: name = try plainString()
                case "order" where order == nil: order = try plainString()
                default: throw Unexpected()
                }
            } while try take(UInt8(ascii: ","))
            try expect(UInt8(ascii: "}"))
            guard let name else { throw Unexpected() }
            switch order {
            case nil, "forward"?: keys.append(SortKey(name))
            case "reverse"?: keys.append(SortKey(name, ascending: false))
            default: throw Unexpected()
            }
        } while try take(UInt8(ascii: ","))
        try expect(UInt8(ascii: "]"))
        return keys
    }

    private mutating func expression(depth: Int) throws -> QueryExpression {
        guard depth < RequestFastDecoder.maximumDepth else { throw Unexpected() }
        try expect(UInt8(ascii: "{"))
        let name = try plainString()
        try expect(UInt8(ascii: ":"))
        let expression: QueryExpression
        if let op = ComparisonOperator(rawValue: name) {
            let operands = try expressions(depth: depth)
            guard operands.count == 2 else { throw Unexpected() }
            expression = .compare(op, operands[0], operands[1])
        } else {
            switch name {
            case "key": expression = .key(try plainString())
            case "value": expression = .value(try plainValue())
            case "and": expression = .and(try expressions(depth: depth))
            case "or": expression = .or(try expressions(depth: depth))
            case "not": expression = .not(try self.expression(depth: depth + 1))
            default: throw Unexpected()
            }
        }
        try expect(UInt8(ascii: "}"))
        return expression
    }

    private mutating func expressions(depth: Int) throws -> [QueryExpression] {
        var operands: [QueryExpression] = []
        try expect(UInt8(ascii: "["))
        if try take(UInt8(ascii: "]")) { return operands }
        repeat { operands.append(try expression(depth: depth + 1)) } while try take(UInt8(ascii: ","))
        try expect(UInt8(ascii: "]"))
        return operands
    }

    /// null, a boolean, an integer, a string, `{"uuid":…}` or `{"date":…}`.
    private mutating func plainValue() throws -> PGValue {
        switch try peek() {
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "\""): return .string(try plainString())
        case UInt8(ascii: "{"):
            try expect(UInt8(ascii: "{"))
            let tag = try plainString()
            try expect(UInt8(ascii: ":"))
            let text = try plainString()
            try expect(UInt8(ascii: "}"))
            switch tag {
            case "uuid":
                guard let uuid = UUID(uuidString: text) else { throw Unexpected() }
                return .uuid(uuid)
            case "date":
                guard let date = PGValue.parseDate(text) else { throw Unexpected() }
                return .date(date)
            default:
                throw Unexpected()
            }
        default:
            return .int(try integer())
        }
    }
}
