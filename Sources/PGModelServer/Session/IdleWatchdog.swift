import Logging
import NIOConcurrencyHelpers
import NIOCore
@_spi(PGModelInternals) import PGModelWire

/// Closes a connection that has sent nothing for its idle timeout: a `timeout` error line (id null),
/// then the socket. A request in progress, or a subscription (the client is listening, not idle), keeps
/// the connection; the clock restarts when the request ends.
///
/// ```swift
/// let idle = IdleWatchdog(outbound: outbound, channel: channel, timeout: .seconds(600), logger: logger) { subscriptions.isListening }
/// let timer = idle.start()
/// defer { timer.cancel() }
/// if idle.requestStarted() { …; idle.requestFinished() }
/// ```
final class IdleWatchdog: Sendable {
    private struct Activity {
        var last: ContinuousClock.Instant = .now
        var isBusy = false
        /// The idle line is decided: no request may start any more.
        var isClosing = false
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

    /// The task that wakes at each possible expiry and closes the connection once it is idle.
    func start() -> Task<Void, any Error> {
        Task { [self] in
            while true {
                let wake = activity.withLockedValue { $0.isBusy ? ContinuousClock.now + timeout : $0.last + timeout }
                try await Task.sleep(until: wake, clock: .continuous)
                let listening = isListening()
                // Decided under the lock that `requestStarted` takes: once closing, nothing more runs, which
                // is what lets a client resend whatever the idle line left unanswered.
                let closing = activity.withLockedValue { activity -> Bool in
                    guard !activity.isBusy, ContinuousClock.now - activity.last >= timeout else { return false }
                    if listening {
                        activity.last = .now
                        return false
                    }
                    activity.isClosing = true
                    return true
                }
                guard closing else { continue }
                logger.notice("closing an idle connection")
                await ClosingNotice(WireError(.timeout, "no request for \(timeout.components.seconds) s; the idle connection is closed"))
                    .send(on: outbound, closing: channel)
                return
            }
        }
    }

    /// A request arrived: the connection is not idle while it runs. `false`: the connection is being
    /// closed as idle and the request must not run.
    func requestStarted() -> Bool {
        activity.withLockedValue { activity in
            guard !activity.isClosing else { return false }
            activity.isBusy = true
            activity.last = .now
            return true
        }
    }

    /// The request's answer is written: the idle clock starts again.
    func requestFinished() {
        activity.withLockedValue { $0.isBusy = false; $0.last = .now }
    }
}
