/// Where a ``ChangeListener`` is, for health checks.
///
/// ```swift
/// let ready = [.idle, .listening].contains(listener.status)
/// ```
@_spi(PGModelInternals) public enum ListenerStatus: String, Sendable {
    /// Not started: no one has asked for change signals yet.
    case idle
    /// LISTEN is in force: commits ring through.
    case listening
    /// The connection was lost (or is being opened); it retries with backoff.
    case reconnecting
    /// Closed for good.
    case closed
}
