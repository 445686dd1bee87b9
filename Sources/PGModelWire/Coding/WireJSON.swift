import Foundation
@_spi(PGModelInternals) import PGModelCore

/// The JSON settings of the line protocol, in one place so that every line is encoded the same way.
///
/// ```swift
/// let line = try WireJSON.encodeLine(Request(id: 1, operation: .ping))   // {"id":1,"op":"ping"}\n
/// ```
@_spi(PGModelInternals) public enum WireJSON {
    /// A fresh encoder: sorted keys make every line deterministic; slashes stay unescaped for readability.
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Dates outside PGValue (history timestamps and filters) travel as ISO 8601 text, like PGValue's.
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var c = encoder.singleValueContainer()
            try c.encode(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        }
        return encoder
    }

    /// A fresh decoder matching ``makeEncoder()``: dates are ISO 8601 text (with or without fractional
    /// seconds) or, for hand-written lines, a number of seconds since 1970.
    ///
    /// ```swift
    /// let page = try WireJSON.makeDecoder().decode(HistoryPage.self, from: data)
    /// ```
    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let c = try decoder.singleValueContainer()
            if let seconds = try? c.decode(Double.self) {
                // Years 1 to 9999, as ISO 8601 text can say: PostgreSQL's driver traps on a date whose
                // microseconds do not fit an Int64.
                guard seconds.isFinite, (-62_135_596_800...253_402_300_799).contains(seconds) else {
                    throw DecodingError.dataCorruptedError(in: c, debugDescription: "a date must lie between the years 1 and 9999")
                }
                return Date(timeIntervalSince1970: seconds)
            }
            let text = try c.decode(String.self)
            if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
            if let date = try? Date.ISO8601FormatStyle().parse(text) { return date }
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "not an ISO 8601 date")
        }
        return decoder
    }

    /// One encoder and one decoder for every line: their settings never change after this and both are
    /// safe to share across threads, so nothing is gained by making them (and their date closures) anew
    /// for each line.
    static let sharedEncoder = makeEncoder()
    static let sharedDecoder = makeDecoder()

    /// `value` as one protocol line: compact JSON (which never contains a raw newline) followed by `"\n"`.
    public static func encodeLine(_ value: some Encodable) throws -> Data {
        var data = try sharedEncoder.encode(value)
        data.append(0x0A)
        return data
    }

    /// A field path for people: `inserts[0].values.name`.
    static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            // Decoders name array elements "Index 0" with an int value; dictionary keys keep their text.
            if let index = key.intValue, key.stringValue.hasPrefix("Index ") {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }

    /// The protocol error for a failure to decode a request's fields. Messages name the field, never its value.
    static func fieldError(_ error: any Error) -> WireError {
        guard let error = error as? DecodingError else {
            if let error = error as? WireError { return error }
            // JSONDecoder reports numbers no Swift type can hold with an internal error that names no field.
            return WireError(.invalidField, "a number in the request is out of range for its field")
        }
        switch error {
        case .keyNotFound(let key, let context):
            let field = path(context.codingPath + [key])
            return WireError(.missingField, "missing field '\(field)'", field: field)
        case .valueNotFound(_, let context):
            let field = path(context.codingPath)
            return WireError(.missingField, "field '\(field)' is null", field: field)
        case .typeMismatch(let type, let context):
            let field = path(context.codingPath)
            return WireError(.invalidField, "field '\(field)' must be \(describe(type))", field: field)
        case .dataCorrupted(let context):
            let field = path(context.codingPath)
            if field.isEmpty {
                return WireError(.invalidField, "invalid request: \(context.debugDescription)")
            }
            return WireError(.invalidField, "field '\(field)' is invalid: \(context.debugDescription)", field: field)
        @unknown default:
            return WireError(.invalidField, "a field has an invalid value")
        }
    }

    /// "an integer", "a string"… for a type a decoder expected.
    static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "a boolean"
        case is Int.Type, is Int64.Type, is Int32.Type, is Int16.Type, is UInt.Type: return "an integer"
        case is Double.Type, is Float.Type: return "a number"
        case is RequestID.Type: return "an integer or a string"
        case is UUID.Type: return "a UUID string"
        case is PGValue.Type: return "a value (string, number, boolean, null or a tagged object)"
        default:
            let name = String(describing: type)
            if name.hasPrefix("Array<") { return "an array" }
            if name.hasPrefix("Dictionary<") { return "an object" }
            return "an object"
        }
    }
}

/// A coding key for any name: lines are objects whose keys depend on the op.
struct DynamicKey: CodingKey, Hashable {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
