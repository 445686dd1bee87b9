/// Whether bytes are well-formed UTF-8, without making a `String` of them.
///
/// `String(validating:as:)` builds a string and, through the generic `_validate`, looks up type metadata at
/// run time: together most of the cost of reading a short request line. Request lines and
/// their strings are nearly always ASCII, which this checks eight bytes at a time; the rest goes through a
/// byte-by-byte check of Unicode's well-formed sequences (no overlong forms, no surrogates, nothing above
/// U+10FFFF), which a test compares with the standard library's on generated input.
///
/// ```swift
/// let ok = line.withUnsafeReadableBytes { UTF8Validation.isValid($0) }
/// ```
enum UTF8Validation {
    static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        var index = 0
        // ASCII, a word at a time.
        while index + 8 <= count {
            if bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { break }
            index += 8
        }
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            let length: Int
            var low: UInt8 = 0x80, high: UInt8 = 0xBF   // the second byte's range
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return false
            }
            guard index + length <= count else { return false }
            let second = bytes[index + 1]
            guard second >= low, second <= high else { return false }
            var next = index + 2
            while next < index + length {
                guard bytes[next] & 0xC0 == 0x80 else { return false }
                next += 1
            }
            index += length
        }
        return true
    }
}
