import Logging
import NIOConcurrencyHelpers
import NIOCore
@_spi(PGModelInternals) import PGModelWire

/// Ends one logged-in connection whose user changed: a `session_revoked` closing notice (id null), then
/// the socket. Once revoked, the connection starts no further request.
///
/// ```swift
/// let revocation = SessionRevocation(outbound: outbound, channel: channel, logger: logger)
/// revocation.revoke(WireError(.sessionRevoked, "your password was changed"))
/// guard !revocation.isRevoked else { break }
/// ```
final class SessionRevocation: Sendable {
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private let channel: any Channel
    private let logger: Logger
    private let revoked = NIOLockedValueBox(false)

    init(outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, channel: any Channel, logger: Logger) {
        self.outbound = outbound
        self.channel = channel
        self.logger = logger
    }

    /// Whether the session was revoked: no request may start any more.
    var isRevoked: Bool { revoked.withLockedValue { $0 } }

    /// Closes the connection with `error`; later calls do nothing.
    func revoke(_ error: WireError) {
        let first = revoked.withLockedValue { revoked -> Bool in
            defer { revoked = true }
            return !revoked
        }
        guard first else { return }
        logger.notice("closing a revoked session", metadata: ["reason": "\(LogText(error.message))"])
        let (writer, connection) = (outbound, channel)
        Task { await ClosingNotice(error).send(on: writer, closing: connection) }
    }
}
