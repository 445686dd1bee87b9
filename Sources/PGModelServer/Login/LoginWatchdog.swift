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
/// watchdog.start()
/// defer { watchdog.stop() }
/// watchdog.helloReceived()
/// let keepOpen = await watchdog.helloChecked(succeeded: false)
/// ```
final class LoginWatchdog: Sendable {
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private let channel: any Channel
    private let timeout: Duration
    private let state = NIOLockedValueBox(LoginDeadlineStateMachine())
    /// The timer now running and its generation: a timer replaced by ``helloDeferred()`` that fires anyway
    /// (it was already due) sees that it is not the current one and does nothing.
    private let timer = NIOLockedValueBox<(generation: Int, scheduled: Scheduled<Void>?)>((0, nil))
    private let logger: Logger

    init(outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, channel: any Channel, timeout: Duration, logger: Logger) {
        self.outbound = outbound
        self.channel = channel
        self.timeout = timeout
        self.logger = logger
    }

    /// Schedules the check at the timeout, on the connection's event loop (``stop()`` it when the
    /// connection ends); it asks the state machine, and closes the connection if it says so.
    func start() {
        let generation = timer.withLockedValue { timer in
            timer.scheduled?.cancel()
            timer.generation += 1
            return timer.generation
        }
        let scheduled = channel.eventLoop.scheduleTask(in: ConnectionDeadline.timeAmount(timeout)) { [self] in
            guard timer.withLockedValue({ $0.generation == generation }) else { return }
            guard state.withLockedValue({ $0.deadlinePassed() }) == .close else { return }
            Task { await close() }
        }
        timer.withLockedValue { timer in
            if timer.generation == generation { timer.scheduled = scheduled } else { scheduled.cancel() }
        }
    }

    /// Cancels the timer (the connection ended).
    func stop() {
        timer.withLockedValue { timer in
            timer.generation += 1
            timer.scheduled?.cancel()
            timer.scheduled = nil
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

    /// The `hello` received was answered without a check (the server was busy): the client gets a whole
    /// login timeout again for its next one.
    func helloDeferred() {
        guard state.withLockedValue({ $0.helloDeferred() }) else { return }
        start()
    }

    private func close() async {
        logger.notice("closing a connection that did not log in in time")
        await ClosingNotice(WireError(.timeout, "no successful hello within \(timeout.components.seconds) s; the connection is closed"))
            .send(on: outbound, closing: channel)
    }
}
