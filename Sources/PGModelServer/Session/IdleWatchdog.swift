import Logging
import NIOConcurrencyHelpers
import NIOCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelWire

/// Closes a connection that has sent nothing for its idle timeout: a `timeout` error line (id null),
/// then the socket. A request in progress, or a subscription (the client is listening, not idle), keeps
/// the connection; the clock restarts when the request ends.
///
/// ```swift
/// let idle = IdleWatchdog(outbound: outbound, channel: channel, timeout: .seconds(600), logger: logger) { subscriptions.isListening }
/// idle.start()
/// defer { idle.stop() }
/// if idle.requestStarted() { …; idle.requestFinished() }
/// ```
///
/// Its clock is a task scheduled on the connection's event loop at each possible expiry.
final class IdleWatchdog: Sendable {
    private struct Activity {
        var last: ContinuousClock.Instant = .now
        /// Requests running now (a concurrent connection runs several).
        var busy = 0
        var isBusy: Bool { busy > 0 }
        /// The idle line is decided: no request may start any more.
        var isClosing = false
        /// The next check; nil once stopped or closing.
        var check: Scheduled<Void>?
        var isStopped = false
    }

    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private let channel: any Channel
    private let timeout: Duration
    private let activity = NIOLockedValueBox(Activity())
    private let isListening: @Sendable () -> Bool
    private let logger: Logger

    init(outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, channel: any Channel, timeout: Duration, logger: Logger,
         isListening: @escaping @Sendable () -> Bool) {
        self.outbound = outbound
        self.channel = channel
        self.timeout = timeout
        self.logger = logger
        self.isListening = isListening
    }

    /// Starts the clock: a check at the first possible expiry.
    func start() {
        schedule(after: timeout)
    }

    /// Stops the clock (the connection ended).
    func stop() {
        activity.withLockedValue { activity -> Scheduled<Void>? in
            activity.isStopped = true
            defer { activity.check = nil }
            return activity.check
        }?.cancel()
    }

    private func schedule(after delay: Duration) {
        activity.withLockedValue { activity in
            guard !activity.isStopped, !activity.isClosing else { return }
            activity.check = channel.eventLoop.scheduleTask(in: ConnectionDeadline.timeAmount(delay)) { [self] in check() }
        }
    }

    /// At a possible expiry: closes the connection if it has been idle for the timeout, otherwise checks
    /// again when it next could be.
    private func check() {
        let listening = isListening()
        // Decided under the lock that `requestStarted` takes: once closing, nothing more runs, which
        // is what lets a client resend whatever the idle line left unanswered.
        let next = activity.withLockedValue { activity -> Duration? in
            guard !activity.isStopped else { return nil }
            let now = ContinuousClock.now
            if activity.isBusy { return timeout }
            let idle = now - activity.last
            guard idle >= timeout else { return timeout - idle }
            if listening {
                activity.last = now
                return timeout
            }
            activity.isClosing = true
            activity.check = nil
            return nil
        }
        if let next { return schedule(after: next) }
        guard activity.withLockedValue({ $0.isClosing && !$0.isStopped }) else { return }
        logger.notice("closing an idle connection")
        let (writer, connection, limit) = (outbound, channel, timeout)
        Task {
            await ClosingNotice(WireError(.timeout, "no request for \(limit.components.seconds) s; the idle connection is closed"))
                .send(on: writer, closing: connection)
        }
    }

    /// A request arrived: the connection is not idle while it runs. `false`: the connection is being
    /// closed as idle and the request must not run.
    func requestStarted() -> Bool {
        activity.withLockedValue { activity in
            guard !activity.isClosing else { return false }
            activity.busy += 1
            activity.last = .now
            return true
        }
    }

    /// The request's answer is written: the idle clock starts again.
    func requestFinished() {
        activity.withLockedValue { $0.busy = max(0, $0.busy - 1); $0.last = .now }
    }
}
