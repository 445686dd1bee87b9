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
        // Two draws of 64 random bits (each may be a system call), not one per byte.
        var generator = SystemRandomNumberGenerator()
        let high = generator.next()
        let low = generator.next()
        func byte(_ word: UInt64, _ index: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: word >> (8 * (7 - index))) }
        return UUID(uuid: (byte(millis, 2), byte(millis, 3), byte(millis, 4), byte(millis, 5), byte(millis, 6), byte(millis, 7),
                           (byte(high, 0) & 0x0F) | 0x70, byte(high, 1),
                           (byte(low, 0) & 0x3F) | 0x80, byte(low, 1), byte(low, 2), byte(low, 3),
                           byte(low, 4), byte(low, 5), byte(low, 6), byte(low, 7)))
    }
}
