import Foundation
@_spi(PGModelInternals) import PGModelCore

/// Appends JSON to a byte array.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []

    var data: Data { Data(bytes) }

    mutating func reserve(_ count: Int) { bytes.reserveCapacity(count) }

    mutating func byte(_ b: UInt8) { bytes.append(b) }

    /// What `other` wrote, after what this one did.
    mutating func append(_ other: JSONWriter) { bytes.append(contentsOf: other.bytes) }

    /// Appends `raw` as one copy. `Array.append(contentsOf:)` copies a typed buffer with `memcpy` but an
    /// untyped one (or a slice of one) byte by byte.
    mutating func append(bytesOf raw: UnsafeRawBufferPointer) {
        raw.withMemoryRebound(to: UInt8.self) { bytes.append(contentsOf: $0) }
    }

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func integer(_ value: Int64) {
        if value < 0 {
            byte(UInt8(ascii: "-"))
            // The magnitude of Int64.min does not fit an Int64.
            unsigned(value.magnitude)
        } else {
            unsigned(UInt64(value))
        }
    }

    private mutating func unsigned(_ value: UInt64) {
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                      UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                count += 1
            } while rest > 0
            append(bytesOf: UnsafeRawBufferPointer(rebasing: buffer[(20 - count)...]))
        }
    }

    mutating func string(_ text: String) {
        byte(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for (i, b) in utf8.enumerated() where b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<i]))
                switch b {
                case UInt8(ascii: "\""): raw("\\\"")
                case UInt8(ascii: "\\"): raw("\\\\")
                case 0x0A: raw("\\n")
                case 0x0D: raw("\\r")
                case 0x09: raw("\\t")
                case 0x08: raw("\\b")
                case 0x0C: raw("\\f")
                default:
                    raw("\\u00")
                    byte(Self.hexDigit(b >> 4))
                    byte(Self.hexDigit(b & 0x0F))
                }
                start = i + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        byte(UInt8(ascii: "\""))
    }

    /// The lowercase hex digit of `nibble` (0–15).
    @inline(__always)
    static func hexDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? nibble &+ UInt8(ascii: "0") : nibble &+ (UInt8(ascii: "a") - 10) }

    /// A lowercase UUID string, quoted. Written into 38 bytes on the stack and appended once: a table's
    /// line has one per row, and appending byte by byte checked the array's capacity 38 times.
    mutating func uuidString(_ id: UUID) {
        var text: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &text) { out in
            out[0] = UInt8(ascii: "\"")
            var o = 1
            withUnsafeBytes(of: id.uuid) { raw in
                for i in 0..<16 {
                    if i == 4 || i == 6 || i == 8 || i == 10 {
                        out[o] = UInt8(ascii: "-")
                        o += 1
                    }
                    out[o] = Self.hexDigit(raw[i] >> 4)
                    out[o + 1] = Self.hexDigit(raw[i] & 0x0F)
                    o += 2
                }
            }
            out[37] = UInt8(ascii: "\"")
            append(bytesOf: UnsafeRawBufferPointer(rebasing: out[0..<38]))
        }
    }

    /// `value` as §5 of PROTOCOL.md says (``PGValue``'s `Codable` form).
    mutating func value(_ value: PGValue) throws {
        switch value {
        case .null: raw("null")
        case .bool(let b): b ? raw("true") : raw("false")
        case .int(let i): integer(i)
        case .double(let d):
            guard d.isFinite else {
                throw EncodingError.invalidValue(d, .init(codingPath: [], debugDescription: "JSON cannot carry \(d)"))
            }
            // Integral doubles are tagged so they come back as doubles, not ints (as PGValue encodes them).
            if d.rounded() == d && abs(d) < 1e15 {
                raw("{\"double\":")
                // Int64 has no negative zero; the sign is part of the value (1 / -0.0 is -inf).
                if d == 0 && d.sign == .minus { byte(UInt8(ascii: "-")) }
                integer(Int64(d))
                byte(UInt8(ascii: "}"))
            } else {
                // Swift's shortest round-trip form is valid JSON for finite values ("0.1", "1e-05", "1e+20").
                var text = d.description
                text.withUTF8 { bytes.append(contentsOf: $0) }
            }
        case .string(let s): string(s)
        case .decimal(let d):
            raw("{\"decimal\":")
            string("\(d)")
            byte(UInt8(ascii: "}"))
        case .date(let d):
            raw("{\"date\":")
            let written = PGValue.withFastFormattedDate(d) { utf8 in
                byte(UInt8(ascii: "\""))
                append(bytesOf: utf8)
                byte(UInt8(ascii: "\""))
            }
            if !written { string(PGValue.formatDate(d)) }
            byte(UInt8(ascii: "}"))
        case .uuid(let u):
            raw("{\"uuid\":")
            uuidString(u)
            byte(UInt8(ascii: "}"))
        case .data(let d):
            raw("{\"data\":")
            string(d.base64EncodedString())
            byte(UInt8(ascii: "}"))
        }
    }
}
