import Foundation

/// Dates as §5 of PROTOCOL.md writes them (`2024-05-01T10:00:00.250001Z`), by arithmetic on the
/// microseconds rather than through `Date.ISO8601FormatStyle`: a fetch through the service formats and
/// parses one per date cell, and the format style costs microseconds each. Years 1000 to 9999 take this
/// path; the rest go through the format style as before.
extension PGValue {
    /// PostgreSQL's timestamp epoch, 2000-01-01 00:00:00 UTC, in seconds since 1970.
    private static let postgresEpochSince1970: Int64 = 946_684_800

    /// `date` in §5's form, or nil outside the years 1000 to 9999.
    static func fastFormatDate(_ date: Date) -> String? {
        var text: String?
        _ = withFastFormattedDate(date) { text = String(decoding: $0, as: UTF8.self) }
        return text
    }

    /// Calls `body` with `date` in §5's form, as UTF-8 bytes on the stack (no quotes; no byte needs
    /// escaping in JSON), and returns true; false, without calling it, outside the years 1000 to 9999.
    /// A writer appends the bytes where they belong instead of building a String per date.
    ///
    /// ```swift
    /// _ = PGValue.withFastFormattedDate(date) { bytes.append(contentsOf: $0) }
    /// ```
    package static func withFastFormattedDate(_ date: Date, _ body: (UnsafeRawBufferPointer) -> Void) -> Bool {
        let micros = (date.timeIntervalSinceReferenceDate * 1_000_000).rounded()
        guard micros.isFinite, abs(micros) < 9e18 else { return false }
        let total = Int64(micros)
        var seconds = total / 1_000_000
        var fraction = total % 1_000_000
        if fraction < 0 { fraction += 1_000_000; seconds -= 1 }
        let unix = seconds + 978_307_200
        var days = unix / 86_400
        var secondOfDay = unix % 86_400
        if secondOfDay < 0 { secondOfDay += 86_400; days -= 1 }
        let (year, month, day) = civil(fromDays: days)
        guard (1000...9999).contains(year) else { return false }
        var storage: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &storage) { out in
            var count = 0
            func digits(_ value: Int64, _ width: Int) {
                var rest = value
                var index = count + width - 1
                while index >= count {
                    out[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                    index -= 1
                }
                count += width
            }
            func byte(_ b: UInt8) {
                out[count] = b
                count += 1
            }
            digits(year, 4); byte(UInt8(ascii: "-"))
            digits(month, 2); byte(UInt8(ascii: "-"))
            digits(day, 2); byte(UInt8(ascii: "T"))
            digits(secondOfDay / 3600, 2); byte(UInt8(ascii: ":"))
            digits(secondOfDay / 60 % 60, 2); byte(UInt8(ascii: ":"))
            digits(secondOfDay % 60, 2); byte(UInt8(ascii: "."))
            // Three digits for whole milliseconds, six otherwise, as formatDate always wrote.
            if fraction % 1000 == 0 { digits(fraction / 1000, 3) } else { digits(fraction, 6) }
            byte(UInt8(ascii: "Z"))
            body(UnsafeRawBufferPointer(rebasing: out[0..<count]))
        }
        return true
    }

    /// `text` in the form `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (1 to 9 fraction digits, rounded to the
    /// microsecond), or nil for any other form. The date is built as PostgresNIO builds a timestamptz
    /// (microseconds since 2000 / 10⁶), so a date read through the service is the very `Date` the
    /// direct store reads.
    static func fastParseDate(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { fastParseDate(utf8: $0) }
    }

    /// ``fastParseDate(_:)`` of UTF-8 bytes where they lie: a reader parses a date without making a
    /// String of it first.
    ///
    /// ```swift
    /// let date = bytes.withMemoryRebound(to: UInt8.self) { PGValue.fastParseDate(utf8: $0) }
    /// ```
    package static func fastParseDate(utf8 b: UnsafeBufferPointer<UInt8>) -> Date? {
        guard b.count >= 20, b.count <= 30, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"),
              b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"), b[b.count - 1] == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for i in range {
                let d = b[i] &- UInt8(ascii: "0")
                guard d < 10 else { return nil }
                value = value * 10 + Int64(d)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60 else { return nil }
        var nanos: Int64 = 0
        if b.count > 20 {
            guard b[19] == UInt8(ascii: "."), b.count - 21 >= 1, b.count - 21 <= 9, let fraction = number(20..<(b.count - 1)) else { return nil }
            nanos = fraction
            for _ in 0..<(9 - (b.count - 21)) { nanos *= 10 }
        } else if b.count != 20 {
            return nil
        }
        let days = days(fromCivil: year, month, day)
        // February 30th and the like: what the format style refuses, this path refuses too.
        guard civil(fromDays: days) == (year, month, day) else { return nil }
        let unix = days * 86_400 + hour * 3600 + minute * 60 + second
        let micros = (unix - postgresEpochSince1970) * 1_000_000 + (nanos + 500) / 1000
        return Date(timeInterval: Double(micros) / 1_000_000, since: Date(timeIntervalSince1970: Double(postgresEpochSince1970)))
    }

    /// Year, month, day of a day count since 1970-01-01 (proleptic Gregorian; H. Hinnant's algorithm).
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Days since 1970-01-01 of a civil date (the inverse of ``civil(fromDays:)``).
    private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
