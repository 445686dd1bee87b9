import NIOConcurrencyHelpers

/// Names one connection's requests for the logs and error answers (`requestID`): a random prefix drawn
/// when the connection opens, then the connection's own count, as in `5f0c2a9e41d7-12`.
///
/// The prefix is random per connection, not a server-wide counter: an id a user sees tells them nothing
/// of other users' requests or connections (how many, how often), and cannot be used to guess theirs.
/// It is no secret either: an id only finds a line in logs an operator already reads. 48 random bits
/// make two connections' prefixes alike about once in many millions of concurrent connections, and the
/// log line names the user besides.
///
/// ```swift
/// let ids = RequestIDSource()
/// let first = ids.next()   // 5f0c2a9e41d7-1
/// ```
final class RequestIDSource: Sendable {
    private let prefix: String
    private let count = NIOLockedValueBox<UInt64>(0)

    init() {
        var generator = SystemRandomNumberGenerator()
        let text = String(generator.next() & 0xFFFF_FFFF_FFFF, radix: 16)
        prefix = String(repeating: "0", count: 12 - text.count) + text + "-"
    }

    /// The next request's id.
    func next() -> ServerRequestID {
        let number = count.withLockedValue { count in
            count &+= 1
            return count
        }
        return ServerRequestID(prefix: prefix, number: number)
    }
}

/// One request's id (``RequestIDSource``): its text is only made when a log line or an error answer
/// needs it, so a request that succeeds unlogged allocates nothing for it.
///
/// ```swift
/// logger.info("request", metadata: ["request_id": .stringConvertible(id)])
/// ```
struct ServerRequestID: CustomStringConvertible, Sendable {
    let prefix: String
    let number: UInt64

    var description: String { prefix + String(number) }
}
