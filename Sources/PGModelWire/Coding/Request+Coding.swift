import Foundation
import NIOCore
@_spi(PGModelInternals) import PGModelCore

extension Request: Codable {
    /// Parses one request line (without its `"\n"`), mapping every failure to a precise protocol error:
    /// `malformed_message` (not JSON, not an object), `missing_field`, `invalid_field` (wrong type or
    /// value, naming the field), `unknown_op`.
    ///
    /// ```swift
    /// let parsed = Request.decode(line: Data(#"{"id":1,"op":"ping"}"#.utf8))   // .success(Request(id: 1, operation: .ping))
    /// ```
    public static func decode(line: Data) -> Result<Request, RequestDecodingFailure> {
        if let request = RequestFastDecoder.decode(line) { return .success(request) }
        return decodeInGeneral(line: line)
    }

    /// What ``decode(line:)-(Data)`` does with a line the fast reader declines: every request, every error.
    static func decodeInGeneral(line: Data) -> Result<Request, RequestDecodingFailure> {
        // The decoder checks UTF-8 only in the strings it reads (and may repair some), so the whole line is
        // checked first: a bad byte anywhere gets the same answer.
        guard String(data: line, encoding: .utf8) != nil else { return .failure(invalidUTF8) }
        do {
            return .success(try WireJSON.sharedDecoder.decode(Request.self, from: line))
        } catch let failure as RequestDecodingFailure {
            return .failure(failure)
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.isEmpty {
            return .failure(notAnObject)
        } catch DecodingError.valueNotFound(_, let context) where context.codingPath.isEmpty {
            return .failure(notAnObject)
        } catch {
            // Foundation's parser also refuses JSON nested deeper than 512 levels here, before any recursion of ours.
            return .failure(RequestDecodingFailure(
                id: nil, error: WireError(.malformedMessage, "the line is not valid JSON")))
        }
    }

    private static let invalidUTF8 = RequestDecodingFailure(
        id: nil, error: WireError(.malformedMessage, "the line is not valid UTF-8"))

    private static let notAnObject = RequestDecodingFailure(
        id: nil, error: WireError(.malformedMessage, "a request is a JSON object"))

    /// ``decode(line:)-(Data)`` for the bytes a ``LineFramer`` produced.
    ///
    /// ```swift
    /// let parsed = Request.decode(line: ByteBuffer(string: #"{"id":1,"op":"ping"}"#))
    /// ```
    public static func decode(line: ByteBuffer) -> Result<Request, RequestDecodingFailure> {
        if let request = line.withUnsafeReadableBytes({ RequestFastDecoder.decode($0) }) { return .success(request) }
        return decodeInGeneral(line: Data(line.readableBytesView))
    }

    /// This request as one line, `"\n"` included.
    ///
    /// ```swift
    /// let data = try Request(id: 1, operation: .ping).encodedLine()
    /// ```
    public func encodedLine() throws -> Data {
        if var line = RequestFastEncoder.encodeBytes(self) {
            line.append(0x0A)
            return Data(line)
        }
        return try WireJSON.encodeLine(self)
    }

    /// ``encodedLine()`` in a `ByteBuffer`, as a channel writes it: the fast encoder's bytes copied once.
    ///
    /// ```swift
    /// channel.writeAndFlush(try Request(id: 1, operation: .ping).encodedLineBuffer(), promise: nil)
    /// ```
    public func encodedLineBuffer() throws -> ByteBuffer {
        guard let line = RequestFastEncoder.encodeBytes(self) else { return ByteBuffer(bytes: try WireJSON.encodeLine(self)) }
        var buffer = ByteBufferAllocator().buffer(capacity: line.count + 1)
        buffer.writeBytes(line)
        buffer.writeInteger(UInt8(0x0A))
        return buffer
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: DynamicKey.self)
        let id = try Request.decodeID(c)
        func fail(_ error: WireError) -> RequestDecodingFailure { RequestDecodingFailure(id: id, error: error) }

        let opKey = DynamicKey("op")
        guard c.contains(opKey), !((try? c.decodeNil(forKey: opKey)) ?? false) else {
            throw fail(WireError(.missingField, "missing field 'op'", field: "op"))
        }
        guard let opName = try? c.decode(String.self, forKey: opKey) else {
            throw fail(WireError(.invalidField, "field 'op' must be a string", field: "op"))
        }
        guard let name = Operation.Name(rawValue: opName) else {
            throw fail(WireError(.unknownOp, "unknown op '\(opName.prefix(64))'", field: "op"))
        }
        do {
            self.init(id: id, operation: try Request.decodeOperation(name, from: decoder), timeout: try Request.decodeTimeout(c),
                      part: name == .save ? try Request.decodePart(c) : nil,
                      traceParent: try Request.decodeTraceField(c, "traceparent", maxBytes: WireProtocol.maxTraceParentBytes),
                      traceState: try Request.decodeTraceField(c, "tracestate", maxBytes: WireProtocol.maxTraceStateBytes),
                      readAfter: try Request.decodeReadAfter(c))
        } catch let failure as RequestDecodingFailure {
            throw failure
        } catch {
            throw fail(WireJSON.fieldError(error))
        }
    }

    /// The id, or a failure without one: a missing, null or mistyped id cannot be echoed.
    private static func decodeID(_ c: KeyedDecodingContainer<DynamicKey>) throws -> RequestID {
        let key = DynamicKey("id")
        guard c.contains(key) else {
            throw RequestDecodingFailure(id: nil, error: WireError(.missingField, "missing field 'id'", field: "id"))
        }
        do {
            return try c.decode(RequestID.self, forKey: key)
        } catch DecodingError.dataCorrupted(let context) {
            throw RequestDecodingFailure(
                id: nil, error: WireError(.invalidField, "field 'id' is invalid: \(context.debugDescription)", field: "id"))
        } catch {
            throw RequestDecodingFailure(
                id: nil, error: WireError(.invalidField, "field 'id' must be an integer or a string", field: "id"))
        }
    }

    /// `timeoutMs`: whole milliseconds in ``WireProtocol/timeoutMillisecondsRange``, or absent (or null).
    private static func decodeTimeout(_ c: KeyedDecodingContainer<DynamicKey>) throws -> Duration? {
        let key = DynamicKey("timeoutMs")
        guard c.contains(key), !(try c.decodeNil(forKey: key)) else { return nil }
        let range = WireProtocol.timeoutMillisecondsRange
        guard let number = try? c.decode(Double.self, forKey: key), number.rounded() == number,
              (Double(range.lowerBound)...Double(range.upperBound)).contains(number) else {
            throw WireError(.invalidField, "field 'timeoutMs' must be a whole number of milliseconds from \(range.lowerBound) to \(range.upperBound)",
                            field: "timeoutMs")
        }
        return .milliseconds(Int64(number))
    }

    /// `traceparent` or `tracestate`: a string of at most `maxBytes`, or absent (or null). Its content is the
    /// tracer's to read; a wrong type or an oversized value is refused, so nothing unbounded reaches it.
    private static func decodeTraceField(_ c: KeyedDecodingContainer<DynamicKey>, _ name: String, maxBytes: Int) throws -> String? {
        let key = DynamicKey(name)
        guard c.contains(key), !(try c.decodeNil(forKey: key)) else { return nil }
        guard let text = try? c.decode(String.self, forKey: key), text.utf8.count <= maxBytes else {
            throw WireError(.invalidField, "field '\(name)' must be a string of at most \(maxBytes) bytes (W3C Trace Context)", field: name)
        }
        return text
    }

    /// `readAfter`: a WAL position in PostgreSQL's text form (`"0/16B3748"`), or absent (or null).
    private static func decodeReadAfter(_ c: KeyedDecodingContainer<DynamicKey>) throws -> LogSequenceNumber? {
        let key = DynamicKey("readAfter")
        guard c.contains(key), !(try c.decodeNil(forKey: key)) else { return nil }
        guard let text = try? c.decode(String.self, forKey: key), let position = LogSequenceNumber(text) else {
            throw WireError(.invalidField, "field 'readAfter' must be a WAL position such as \"0/16B3748\" (a save's commitLSN)", field: "readAfter")
        }
        return position
    }

    /// `part` and `parts` of a save in parts: both or neither (null counts as absent), within
    /// ``SavePart``'s ranges.
    private static func decodePart(_ c: KeyedDecodingContainer<DynamicKey>) throws -> SavePart? {
        let (partKey, partsKey) = (DynamicKey("part"), DynamicKey("parts"))
        let hasPart = try c.contains(partKey) && !c.decodeNil(forKey: partKey)
        let hasParts = try c.contains(partsKey) && !c.decodeNil(forKey: partsKey)
        guard hasPart || hasParts else { return nil }
        guard hasParts else {
            throw WireError(.invalidField, "field 'part' needs 'parts', the number of parts of the save", field: "parts")
        }
        guard hasPart else {
            throw WireError(.invalidField, "field 'parts' needs 'part', which part of the save this line is", field: "part")
        }
        guard let count = Self.exactInteger(c, partsKey), (1...SavePart.maximumCount).contains(count) else {
            throw WireError(.invalidField, "field 'parts' must be an integer from 1 to \(SavePart.maximumCount)", field: "parts")
        }
        guard let index = Self.exactInteger(c, partKey), (0..<count).contains(index) else {
            throw WireError(.invalidField, "field 'part' must be an integer from 0 to \(count - 1) (parts minus one)", field: "part")
        }
        return SavePart(index: index, count: count)
    }

    /// A whole number that fits Int, given as a JSON number; nil for anything else.
    private static func exactInteger(_ c: KeyedDecodingContainer<DynamicKey>, _ key: DynamicKey) -> Int? {
        if let integer = try? c.decode(Int.self, forKey: key) { return integer }
        guard let number = try? c.decode(Double.self, forKey: key), number.rounded() == number, abs(number) < 1e15 else { return nil }
        return Int(number)
    }

    private static func decodeOperation(_ name: Operation.Name, from decoder: any Decoder) throws -> Operation {
        switch name {
        case .hello:
            return .hello(try HelloPayload(from: decoder))
        case .ping:
            return .ping
        case .bye:
            return .bye
        case .register:
            let c = try decoder.container(keyedBy: DynamicKey.self)
            return .register(try c.decode(SchemaDescription.self, forKey: DynamicKey("schema")))
        case .migrate:
            let c = try decoder.container(keyedBy: DynamicKey.self)
            return .migrate(try c.decode(SchemaDescription.self, forKey: DynamicKey("schema")),
                            try c.decode(MigrationPlanDescription.self, forKey: DynamicKey("plan")))
        case .fetch:
            let c = try decoder.container(keyedBy: DynamicKey.self)
            switch try c.decodeIfPresent(String.self, forKey: DynamicKey("format")) {
            case nil, "rows"?: return .fetch(try decodeFetch(from: decoder))
            case "table"?: return .fetchTable(try decodeFetch(from: decoder))
            default: throw WireError(.invalidField, "field 'format' must be \"rows\" or \"table\"", field: "format")
            }
        case .count:
            return .count(try decodeFetch(from: decoder))
        case .ids:
            return .ids(try decodeFetch(from: decoder))
        case .save:
            return .save(try SavePayload(from: decoder).request)
        case .history:
            return .history(try decodeHistory(from: decoder))
        case .deleteHistory:
            return .deleteHistory(try decodeHistory(from: decoder))
        case .subscribe:
            let c = try decoder.container(keyedBy: DynamicKey.self)
            let key = DynamicKey("entities")
            guard c.contains(key), !(try c.decodeNil(forKey: key)) else { return .subscribe(entities: nil) }
            let entities = try c.decode([String].self, forKey: key)
            // An empty list would mean "no events at all", which is surely a mistake; omit the field for all.
            guard !entities.isEmpty else {
                throw WireError(.invalidField, "field 'entities' must name at least one entity; omit it for all", field: "entities")
            }
            return .subscribe(entities: entities)
        case .unsubscribe:
            let c = try decoder.container(keyedBy: DynamicKey.self)
            return .unsubscribe(subscription: try c.decode(RequestID.self, forKey: DynamicKey("subscription")))
        case .share:
            let c = try decoder.container(keyedBy: DynamicKey.self)
            let record = try decodeRecord(c)
            guard c.contains(DynamicKey("permission")), !(try c.decodeNil(forKey: DynamicKey("permission"))) else {
                throw WireError(.missingField, "missing field 'permission' (readOnly or readWrite)", field: "permission")
            }
            let permission = try c.decode(SharePermission.self, forKey: DynamicKey("permission"))
            return .share(ShareChange(record: record, user: try decodeUserName(c), permission: permission))
        case .unshare:
            let c = try decoder.container(keyedBy: DynamicKey.self)
            return .unshare(ShareChange(record: try decodeRecord(c), user: try decodeUserName(c), permission: nil))
        case .shares:
            return .shares(try decodeRecord(try decoder.container(keyedBy: DynamicKey.self)))
        }
    }

    /// The record of `share`, `unshare` and `shares`: `entity` and `rowID` (`id` is the request's).
    private static func decodeRecord(_ c: KeyedDecodingContainer<DynamicKey>) throws -> RowReference {
        RowReference(entity: try c.decode(String.self, forKey: DynamicKey("entity")), id: try c.decode(UUID.self, forKey: DynamicKey("rowID")))
    }

    private static func decodeUserName(_ c: KeyedDecodingContainer<DynamicKey>) throws -> String {
        let user = try c.decode(String.self, forKey: DynamicKey("user"))
        guard (1...128).contains(user.count) else {
            throw WireError(.invalidField, "field 'user' must be a user name of 1 to 128 characters", field: "user")
        }
        return user
    }

    /// The `history` object of `history` and `deleteHistory`; required, so that a typo never deletes everything.
    private static func decodeHistory(from decoder: any Decoder) throws -> HistoryRequest {
        let c = try decoder.container(keyedBy: DynamicKey.self)
        let key = DynamicKey("history")
        if let history = try? c.nestedContainer(keyedBy: DynamicKey.self, forKey: key) {
            try checkIntegerRange(history, "limit", field: "history.limit")
            if let limit = try? history.decodeIfPresent(Int.self, forKey: DynamicKey("limit")), limit < 0 {
                throw WireError(.invalidField, "field 'history.limit' must be a non-negative integer", field: "history.limit")
            }
        }
        return try c.decode(HistoryRequest.self, forKey: key)
    }

    private static func decodeFetch(from decoder: any Decoder) throws -> FetchRequest {
        // A number beyond Int's range fails inside JSONDecoder without naming its field; name it here.
        let c = try decoder.container(keyedBy: DynamicKey.self)
        for name in ["limit", "offset"] { try checkIntegerRange(c, name, field: name) }
        let request = try FetchRequest(from: decoder)
        if let limit = request.limit, limit < 0 {
            throw WireError(.invalidField, "field 'limit' must not be negative", field: "limit")
        }
        if let offset = request.offset, offset < 0 {
            throw WireError(.invalidField, "field 'offset' must not be negative", field: "offset")
        }
        return request
    }

    /// Throws `invalid_field` naming `field` when `name` holds a number no 64-bit integer holds (a
    /// fraction, 2⁶³ and beyond, or one JSON cannot even give as a double, like `1e400`): JSONDecoder's
    /// own error for it names no field. Whole numbers up to 2⁶³−1 pass, and so does anything that is not
    /// a number, which the field's own decoding reports.
    static func checkIntegerRange(_ c: KeyedDecodingContainer<DynamicKey>, _ name: String, field: String) throws {
        let key = DynamicKey(name)
        guard c.contains(key), (try? c.decodeNil(forKey: key)) == false, (try? c.decode(Int.self, forKey: key)) == nil else { return }
        if let number = try? c.decode(Double.self, forKey: key) {
            // JSONDecoder's error for a fraction names no field either.
            guard number == number.rounded(.towardZero) else {
                throw WireError(.invalidField, "field '\(field)' must be an integer", field: field)
            }
        } else if (try? c.decode(String.self, forKey: key)) != nil || (try? c.decode(Bool.self, forKey: key)) != nil
                    || (try? c.nestedContainer(keyedBy: DynamicKey.self, forKey: key)) != nil
                    || (try? c.nestedUnkeyedContainer(forKey: key)) != nil {
            return
        }
        throw WireError(.invalidField, "field '\(field)' is out of range (a whole number from 0 to 2^63-1)", field: field)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: DynamicKey.self)
        try c.encode(id, forKey: DynamicKey("id"))
        try c.encode(operation.name.rawValue, forKey: DynamicKey("op"))
        switch operation {
        case .hello(let hello): try hello.encode(to: encoder)
        case .ping, .bye: break
        case .register(let schema): try c.encode(schema, forKey: DynamicKey("schema"))
        case .migrate(let schema, let plan):
            try c.encode(schema, forKey: DynamicKey("schema"))
            try c.encode(plan, forKey: DynamicKey("plan"))
        case .fetch(let request), .count(let request), .ids(let request): try request.encode(to: encoder)
        case .fetchTable(let request):
            try request.encode(to: encoder)
            try c.encode("table", forKey: DynamicKey("format"))
        case .save(let request): try SavePayload(request).encode(to: encoder)
        case .history(let request), .deleteHistory(let request): try c.encode(request, forKey: DynamicKey("history"))
        case .subscribe(let entities): try c.encodeIfPresent(entities, forKey: DynamicKey("entities"))
        case .unsubscribe(let subscription): try c.encode(subscription, forKey: DynamicKey("subscription"))
        case .share(let change), .unshare(let change):
            try c.encode(change.record.entity, forKey: DynamicKey("entity"))
            try c.encode(change.record.id.uuidString.lowercased(), forKey: DynamicKey("rowID"))
            try c.encode(change.user, forKey: DynamicKey("user"))
            if case .share = operation { try c.encodeIfPresent(change.permission, forKey: DynamicKey("permission")) }
        case .shares(let record):
            try c.encode(record.entity, forKey: DynamicKey("entity"))
            try c.encode(record.id.uuidString.lowercased(), forKey: DynamicKey("rowID"))
        }
        try c.encodeIfPresent(timeoutMilliseconds, forKey: DynamicKey("timeoutMs"))
        try c.encodeIfPresent(traceParent, forKey: DynamicKey("traceparent"))
        try c.encodeIfPresent(traceState, forKey: DynamicKey("tracestate"))
        try c.encodeIfPresent(readAfter?.description, forKey: DynamicKey("readAfter"))
        if case .save = operation, let part {
            try c.encode(part.index, forKey: DynamicKey("part"))
            try c.encode(part.count, forKey: DynamicKey("parts"))
        }
    }
}
