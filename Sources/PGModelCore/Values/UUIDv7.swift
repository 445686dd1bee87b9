import Foundation
#if canImport(Glibc)
import Glibc
#endif

@_spi(PGModelInternals) extension UUID {
    /// A time-ordered UUID (RFC 9562 version 7): 48 bits of Unix milliseconds, then random bits.
    /// Consecutive inserts land next to each other in the primary-key index.
    ///
    /// ```swift
    /// let id = UUID.v7()
    /// ```
    public static func v7(now: Date = Date()) -> UUID {
        let millis = UInt64(max(0, now.timeIntervalSince1970 * 1000))
        let (high, low) = RandomBits.shared.pair()
        func byte(_ word: UInt64, _ index: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: word >> (8 * (7 - index))) }
        return UUID(uuid: (byte(millis, 2), byte(millis, 3), byte(millis, 4), byte(millis, 5), byte(millis, 6), byte(millis, 7),
                           (byte(high, 0) & 0x0F) | 0x70, byte(high, 1),
                           (byte(low, 0) & 0x3F) | 0x80, byte(low, 1), byte(low, 2), byte(low, 3),
                           byte(low, 4), byte(low, 5), byte(low, 6), byte(low, 7)))
    }
}

/// Random bits for ids, read from the system 4 KiB at a time: every model gets an id when it is made,
/// and two system calls per id (`SystemRandomNumberGenerator` draws 64 bits a call) were a tenth of a
/// bulk insert's client time. Falls back to `SystemRandomNumberGenerator` if the read fails.
final class RandomBits: @unchecked Sendable {
    // @unchecked: `words` and `next` are only touched under `lock`.
    static let shared = RandomBits()
    private let lock = NSLock()
    private var words = [UInt64](repeating: 0, count: 512)
    private var next = 512

    private init() {
        #if canImport(Glibc)
        // A child forked without exec would otherwise draw the very ids its parent draws next: it
        // starts with an empty pool (it has one thread then, so no lock is needed).
        pthread_atfork(nil, nil) { RandomBits.shared.next = Int.max / 2 }
        #endif
    }

    /// Two fresh 64-bit random words.
    func pair() -> (UInt64, UInt64) {
        lock.withLock {
            if next + 2 > words.count { refill() }
            defer { next += 2 }
            return (words[next], words[next + 1])
        }
    }

    private func refill() {
        next = 0
        #if canImport(Glibc)
        let read = words.withUnsafeMutableBytes { buffer -> Bool in
            let fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
            guard fd >= 0, let base = buffer.baseAddress else { return false }
            defer { close(fd) }
            var filled = 0
            while filled < buffer.count {
                let n = Glibc.read(fd, base + filled, buffer.count - filled)
                if n > 0 { filled += n } else if n < 0 && errno == EINTR { continue } else { return false }
            }
            return true
        }
        if read { return }
        #endif
        var generator = SystemRandomNumberGenerator()
        for i in words.indices { words[i] = generator.next() }
    }
}
