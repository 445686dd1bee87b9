import Logging
import NIOConcurrencyHelpers
import NIOCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelWire

/// Closes a connection that has not logged in within its time: a `timeout` error line (id null), then
/// the socket. The decisions are ``LoginDeadlineStateMachine``'s; this performs them. A `hello` still
/// being checked when the time is up is not held against the client (see the state machine).
///
/// ```swift
/// let watchdog = LoginWatchdog(outbound: outbound, channel: channel, timeout: .seconds(10), logger: logger)
/// let timer = watchdog.start()
/// defer { timer.cancel() }
/// watchdog.helloReceived()
/// let keepOpen = await watchdog.helloChecked(succeeded: false)
/// ```
final class LoginWatchdog: Sendable {
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private let channel: any Channel
    private let timeout: Duration
    private let state = NIOLockedValueBox(LoginDeadlineStateMachine())
    private let logger: Logger

    init(outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, channel: any Channel, timeout: Duration, logger: Logger) {
        self.outbound = outbound
        self.channel = channel
        self.timeout = timeout
        self.logger = logger
    }

    /// Schedules the check at the timeout, on the connection's event loop (cancel it when the
    /// connection ends); it asks the state machine, and closes the connection if it says so.
    func start() -> Scheduled<Void> {
        channel.eventLoop.scheduleTask(in: ConnectionDeadline.timeAmount(timeout)) { [self] in
            guard state.withLockedValue({ $0.deadlinePassed() }) == .close else { return }
            Task { await close() }
        }
    }

    /// A `hello` line arrived: the clock stops while the server checks it.
    func helloReceived() {
        state.withLockedValue { $0.helloReceived() }
    }

    /// The `hello` check ended (its answer already written); returns whether the connection stays open.
    func helloChecked(succeeded: Bool) async -> Bool {
        guard state.withLockedValue({ $0.helloChecked(succeeded: succeeded) }) == .close else { return true }
        await close()
        return false
    }

    private func close() async {
        logger.notice("closing a connection that did not log in in time")
        await ClosingNotice(WireError(.timeout, "no successful hello within \(timeout.components.seconds) s; the connection is closed"))
            .send(on: outbound, closing: channel)
    }
}
