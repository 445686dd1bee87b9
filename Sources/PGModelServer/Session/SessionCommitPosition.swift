import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModelCore

/// The newest commit position of one connection's saves (share changes included): with read replicas,
/// the connection's reads go to a standby only once it has replayed this far, or the request's own
/// `readAfter` (the client's newest, carried across reconnects), whichever is later.
///
/// ```swift
/// position.record(result.commitLSN)
/// let after = position.readAfter(request.readAfter)
/// ```
final class SessionCommitPosition: Sendable {
    private let newest = NIOLockedValueBox<LogSequenceNumber?>(nil)

    /// Remembers a save's commit position (positions only move forward).
    func record(_ position: LogSequenceNumber?) {
        guard let position else { return }
        newest.withLockedValue { $0 = LogSequenceNumber.latest($0, position) }
    }

    /// The position a read waits for: the later of the connection's newest commit and `requested`.
    func readAfter(_ requested: LogSequenceNumber?) -> LogSequenceNumber? {
        LogSequenceNumber.latest(newest.withLockedValue { $0 }, requested)
    }
}
