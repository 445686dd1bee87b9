import Foundation

extension UUID {
    /// A time-ordered UUID (RFC 9562 version 7): 48 bits of Unix milliseconds, then random bits.
    /// Consecutive inserts land next to each other in the primary-key index.
    ///
    /// ```swift
    /// let id = UUID.v7()
    /// ```
    public static func v7(now: Date = Date()) -> UUID {
        let millis = UInt64(max(0, now.timeIntervalSince1970 * 1000))
        var bytes = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for i in 6..<16 { bytes[i] = UInt8.random(in: 0...255, using: &generator) }
        for i in 0..<6 { bytes[i] = UInt8(truncatingIfNeeded: millis >> (8 * (5 - UInt64(i)))) }
        bytes[6] = (bytes[6] & 0x0F) | 0x70
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
