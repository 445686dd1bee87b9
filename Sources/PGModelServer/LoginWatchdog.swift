import Logging
import NIOConcurrencyHelpers
import NIOCore
import PGModelWire

/// Closes a connection that has not logged in within its time: a `timeout` error line (id null), then
/// the socket. Started when the connection opens; cancelled when it ends.
///
/// ```swift
/// let watchdog = LoginWatchdog(outbound: outbound, channel: channel, loggedIn: loggedIn, logger: logger).start(after: .seconds(10))
/// defer { watchdog.cancel() }
/// ```
final class LoginWatchdog: Sendable {
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private let channel: any Channel
    private let loggedIn: NIOLockedValueBox<Bool>
    private let logger: Logger

    init(outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, channel: any Channel, loggedIn: NIOLockedValueBox<Bool>, logger: Logger) {
        self.outbound = outbound
        self.channel = channel
        self.loggedIn = loggedIn
        self.logger = logger
    }

    /// The task that waits `timeout` and closes the connection unless it logged in meanwhile.
    func start(after timeout: Duration) -> Task<Void, any Error> {
        Task { [self] in
            try await Task.sleep(for: timeout)
            guard !loggedIn.withLockedValue({ $0 }) else { return }
            logger.notice("closing a connection that did not log in in time")
            let error = WireError(.timeout, "no successful hello within \(timeout.components.seconds) s; the connection is closed")
            if let line = try? Response(id: nil, error: error).encodedLine() {
                try? await outbound.write(ByteBuffer(bytes: line))
            }
            try? await channel.close()
        }
    }
}
