import Foundation

/// A stored value as it travels between the model layer, the SQL renderer and the wire.
///
/// Every attribute type PGModel supports maps onto one case; enums store their raw value,
/// `URL` stores its absolute string, the narrow integer types widen to ``int(_:)``.
///
/// On the wire, strings, booleans, integers, doubles and `null` are plain JSON; the other
/// cases are one-key objects so that a decoder never has to guess:
/// `{"date":"2024-05-01T10:00:00Z"}`, `{"uuid":"…"}`, `{"decimal":"12.50"}`, `{"data":"<base64>"}`.
///
/// ```swift
/// let v: PGValue = .string("Paris")
/// ```
public enum PGValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case decimal(Decimal)
    case date(Date)
    case uuid(UUID)
    case data(Data)

    /// `true` for ``null``.
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// A short name of the case, used in error messages (never the value itself).
    public var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "bool"
        case .int: return "int"
        case .double: return "double"
        case .string: return "string"
        case .decimal: return "decimal"
        case .date: return "date"
        case .uuid: return "uuid"
        case .data: return "data"
        }
    }
}

extension PGValue: Codable {
    private enum TagKey: String, CodingKey { case date, uuid, decimal, data, double }

    public init(from decoder: any Decoder) throws {
        if let keyed = try? decoder.container(keyedBy: TagKey.self) {
            // `allKeys` lists only the tags: an unknown key beside one (`{"date":…,"x":1}`) is counted here.
            let written = (try? decoder.container(keyedBy: AnyTagKey.self).allKeys.count) ?? 0
            guard let key = keyed.allKeys.first, keyed.allKeys.count == 1, written == 1 else {
                throw DecodingError.dataCorrupted(.init(
                    codingPath: decoder.codingPath,
                    debugDescription: "a tagged value has exactly one of the keys date, uuid, decimal, data, double"))
            }
            switch key {
            case .date:
                let text = try keyed.decode(String.self, forKey: .date)
                guard let date = PGValue.parseDate(text) else {
                    throw DecodingError.dataCorruptedError(forKey: .date, in: keyed, debugDescription: "not an ISO 8601 date")
                }
                self = .date(date)
            case .uuid:
                let text = try keyed.decode(String.self, forKey: .uuid)
                guard let uuid = UUID(uuidString: text) else {
                    throw DecodingError.dataCorruptedError(forKey: .uuid, in: keyed, debugDescription: "not a UUID")
                }
                self = .uuid(uuid)
            case .decimal:
                let text = try keyed.decode(String.self, forKey: .decimal)
                guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                    throw DecodingError.dataCorruptedError(forKey: .decimal, in: keyed, debugDescription: "not a decimal number")
                }
                self = .decimal(decimal)
            case .data:
                let text = try keyed.decode(String.self, forKey: .data)
                guard let data = Data(base64Encoded: text) else {
                    throw DecodingError.dataCorruptedError(forKey: .data, in: keyed, debugDescription: "not base64")
                }
                self = .data(data)
            case .double:
                self = .double(try keyed.decode(Double.self, forKey: .double))
            }
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() { self = .null; return }
        if let b = try? single.decode(Bool.self) { self = .bool(b); return }
        if let i = try? single.decode(Int64.self) { self = .int(i); return }
        if let d = try? single.decode(Double.self) { self = .double(d); return }
        if let s = try? single.decode(String.self) { self = .string(s); return }
        throw DecodingError.dataCorruptedError(in: single, debugDescription: "not a PGModel value")
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var c = encoder.singleValueContainer(); try c.encodeNil()
        case .bool(let b):
            var c = encoder.singleValueContainer(); try c.encode(b)
        case .int(let i):
            var c = encoder.singleValueContainer(); try c.encode(i)
        case .double(let d):
            // Integral doubles are tagged so they come back as doubles, not ints.
            if d.isFinite && d.rounded() == d && abs(d) < 1e15 {
                var c = encoder.container(keyedBy: TagKey.self); try c.encode(d, forKey: .double)
            } else {
                var c = encoder.singleValueContainer(); try c.encode(d)
            }
        case .string(let s):
            var c = encoder.singleValueContainer(); try c.encode(s)
        case .decimal(let d):
            var c = encoder.container(keyedBy: TagKey.self); try c.encode("\(d)", forKey: .decimal)
        case .date(let d):
            var c = encoder.container(keyedBy: TagKey.self); try c.encode(PGValue.formatDate(d), forKey: .date)
        case .uuid(let u):
            var c = encoder.container(keyedBy: TagKey.self); try c.encode(u.uuidString.lowercased(), forKey: .uuid)
        case .data(let d):
            var c = encoder.container(keyedBy: TagKey.self); try c.encode(d.base64EncodedString(), forKey: .data)
        }
    }

    /// ISO 8601 with fractional seconds, UTC, to the microsecond like PostgreSQL's timestamptz: three
    /// digits when the microseconds are whole milliseconds (`10:00:00.250Z`), six otherwise
    /// (`10:00:00.250001Z`), so a date read through the service compares equal to the stored one (a keyset
    /// cursor depends on it).
    ///
    /// ```swift
    /// PGValue.formatDate(Date(timeIntervalSince1970: 0.25))   // "1970-01-01T00:00:00.250Z"
    /// ```
    public static func formatDate(_ date: Date) -> String {
        if let text = fastFormatDate(date) { return text }
        let micros = (date.timeIntervalSinceReferenceDate * 1_000_000).rounded()
        guard micros.isFinite, abs(micros) < 9e18 else {
            return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        }
        let total = Int64(micros)
        var seconds = total / 1_000_000
        var fraction = total % 1_000_000
        if fraction < 0 { fraction += 1_000_000; seconds -= 1 }
        let whole = Date(timeIntervalSinceReferenceDate: Double(seconds)).formatted(Date.ISO8601FormatStyle())
        guard whole.hasSuffix("Z") else { return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)) }
        let digits = fraction % 1000 == 0 ? String(fraction / 1000) : String(fraction)
        let width = fraction % 1000 == 0 ? 3 : 6
        return whole.dropLast() + "." + String(repeating: "0", count: width - digits.count) + digits + "Z"
    }

    /// A date in §5's form (ISO 8601, UTC, with or without fractional seconds), or nil.
    ///
    /// ```swift
    /// PGValue.parseDate("1970-01-01T00:00:00.250Z")   // Date(timeIntervalSince1970: 0.25)
    /// ```
    public static func parseDate(_ text: String) -> Date? {
        if let d = fastParseDate(text) { return d }
        if let d = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return d }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}

/// Any key of a tagged value's object, so keys that are not tags are seen too.
private struct AnyTagKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
