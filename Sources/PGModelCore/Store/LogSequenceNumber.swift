import Foundation

/// A position in PostgreSQL's write-ahead log (an LSN), in PostgreSQL's text form `"16/B374D848"`: two
/// hexadecimal numbers of at most 8 digits, the high and low 32 bits. A save reports where its commit
/// ends (``SaveResult/commitLSN``); a read may go to a standby once the standby has replayed that far.
///
/// ```swift
/// let commit = try LogSequenceNumber(parsing: "0/16B3748")
/// commit < LogSequenceNumber(rawValue: 0x1_0000_0000)   // true
/// commit.description                                    // "0/16B3748"
/// ```
@_spi(PGModelInternals) public struct LogSequenceNumber: RawRepresentable, Comparable, Hashable, Sendable, CustomStringConvertible, Codable {
    /// The 64-bit position.
    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Parses PostgreSQL's text form; `nil` for anything else (no sign, no spaces, no `0x`, 1–8 hex
    /// digits on each side of one `/`).
    ///
    /// ```swift
    /// LogSequenceNumber("0/16B3748")?.rawValue   // 0x16B3748
    /// LogSequenceNumber("nonsense")              // nil
    /// ```
    public init?(_ text: String) {
        let parts = text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard parts.count == 2, let high = Self.hex(parts[0]), let low = Self.hex(parts[1]) else { return nil }
        rawValue = high << 32 | low
    }

    /// ``init(_:)`` that throws `invalid_field` naming `field` for anything but an LSN's text form.
    ///
    /// ```swift
    /// let position = try LogSequenceNumber(parsing: "0/16B3748", field: "readAfter")
    /// ```
    public init(parsing text: String, field: String = "position") throws {
        guard let parsed = LogSequenceNumber(text) else {
            throw PGModelError(.invalidField, "\(field) is not a WAL position such as \"0/16B3748\"")
        }
        self = parsed
    }

    private static func hex(_ digits: Substring.UTF8View.SubSequence) -> UInt64? {
        guard (1...8).contains(digits.count) else { return nil }
        var value: UInt64 = 0
        for byte in digits {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            default: return nil
            }
            value = value << 4 | UInt64(digit)
        }
        return value
    }

    public static func < (lhs: LogSequenceNumber, rhs: LogSequenceNumber) -> Bool { lhs.rawValue < rhs.rawValue }

    /// PostgreSQL's text form, upper-case hex without leading zeros: `"0/16B3748"`.
    public var description: String {
        String(rawValue >> 32, radix: 16, uppercase: true) + "/" + String(rawValue & 0xFFFF_FFFF, radix: 16, uppercase: true)
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let parsed = LogSequenceNumber(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a WAL position such as \"0/16B3748\""))
        }
        self = parsed
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// The later of two optional positions (`nil` is none yet).
    ///
    /// ```swift
    /// LogSequenceNumber.latest(nil, LogSequenceNumber("0/10"))   // 0/10
    /// ```
    public static func latest(_ a: LogSequenceNumber?, _ b: LogSequenceNumber?) -> LogSequenceNumber? {
        switch (a, b) {
        case (let a?, let b?): return max(a, b)
        case (let a?, nil): return a
        case (nil, let b): return b
        }
    }
}
