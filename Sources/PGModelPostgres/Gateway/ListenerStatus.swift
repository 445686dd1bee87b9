/// Where a ``ChangeListener`` is, for health checks.
///
/// ```swift
/// let ready = [.idle, .listening].contains(listener.status)
/// ```
@_spi(PGModelInternals) public enum ListenerStatus: String, Sendable {
    /// Not started: no one has asked for change signals yet.
    case idle
    /// Started, and opening its first connection: LISTEN is not in force yet.
    case connecting
    /// LISTEN is in force: commits ring through.
    case listening
    /// LISTEN was in force and its connection was lost; it reconnects with backoff.
    case reconnecting
    /// Closed for good.
    case closed
}
