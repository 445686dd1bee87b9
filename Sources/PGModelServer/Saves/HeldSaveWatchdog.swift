import Logging
import NIOConcurrencyHelpers
import NIOCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelWire

/// Closes a connection whose save in parts waits too long for its next part (PROTOCOL.md §4, A save in
/// parts): a `timeout` line (id null), then the socket, which drops the held parts and gives their bytes
/// back to the server's budget. Without it a client could hold its parts, and so other clients' room for
/// theirs, for as long as it kept its connection busy with other requests or a subscription. Past the
/// deadline no request starts; one in progress is not cut short, the connection closes after its answer.
///
/// Its clock, a task scheduled on the connection's event loop, runs only while a save is held.
///
/// ```swift
/// let watchdog = HeldSaveWatchdog(outbound: outbound, channel: channel, timeout: .seconds(60), logger: logger)
/// defer { watchdog.stop() }
/// watchdog.partHeld()      // after answering {"held":n}
/// watchdog.saveEnded()     // the save ran or was dropped
/// ```
final class HeldSaveWatchdog: Sendable {
    private struct State {
        /// When the held save expires; nil while no save is held.
        var deadline: ContinuousClock.Instant?
        /// Requests running now (a concurrent connection runs several).
        var busy = 0
        var isBusy: Bool { busy > 0 }
        /// The connection is being closed: no request may start any more.
        var isClosing = false
        /// The deadline passed during a request: the connection closes once its answer is written.
        var closesAfterRequest = false
        /// The next check of the deadline; nil while none is scheduled.
        var check: Scheduled<Void>?
        /// The closing notice being written.
        var closing: Task<Void, Never>?
        var isStopped = false
    }

    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private let channel: any Channel
    private let timeout: Duration
    private let state = NIOLockedValueBox(State())
    private let logger: Logger

    init(outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, channel: any Channel, timeout: Duration, logger: Logger) {
        self.outbound = outbound
        self.channel = channel
        self.timeout = timeout
        self.logger = logger
    }

    /// A part was held: the save's next part is due within the timeout, and its last part by `expiry`
    /// (its lifetime's end), whichever comes first.
    func partHeld(expiry: ContinuousClock.Instant? = nil) {
        state.withLockedValue { state in
            let now = ContinuousClock.now
            let deadline = min(now + timeout, expiry ?? now + timeout)
            state.deadline = deadline
            if state.check == nil { schedule(at: deadline, in: &state) }
        }
    }

    /// The held save ran or was dropped.
    func saveEnded() {
        state.withLockedValue { $0.deadline = nil }
    }

    /// A request arrived. `false`: the connection is being closed and the request must not run.
    func requestStarted() -> Bool {
        state.withLockedValue { state in
            guard !state.isClosing else { return false }
            state.busy += 1
            return true
        }
    }

    /// The request's answer is written; if the deadline passed meanwhile, the connection closes once no
    /// request runs any more.
    func requestFinished() {
        state.withLockedValue { state in
            state.busy = max(0, state.busy - 1)
            guard state.busy == 0, state.closesAfterRequest else { return }
            state.closesAfterRequest = false
            startClosing(&state)
        }
    }

    /// Stops watching (the connection ended).
    func stop() {
        state.withLockedValue { state -> Scheduled<Void>? in
            state.isStopped = true
            defer { state.check = nil }
            return state.check
        }?.cancel()
    }

    /// Returns once the closing notice, if one is on its way, is written: a request refused by
    /// ``requestStarted()`` waits for it, so the connection does not close before its last word.
    func closingFinished() async {
        await state.withLockedValue { $0.closing }?.value
    }

    /// Schedules the check at `deadline`. Under the lock, so a deadline set meanwhile sees the check.
    private func schedule(at deadline: ContinuousClock.Instant, in state: inout State) {
        guard !state.isStopped else { return }
        let delay = max(.zero, deadline - .now)
        state.check = channel.eventLoop.scheduleTask(in: ConnectionDeadline.timeAmount(delay)) { [self] in check() }
    }

    /// At the deadline as it was: closes the connection if the held save's deadline has passed (after the
    /// request in progress, so its answer is not cut off); otherwise checks again at the new deadline.
    private func check() {
        state.withLockedValue { state in
            state.check = nil
            guard !state.isStopped, let deadline = state.deadline else { return }
            guard deadline <= .now else { return schedule(at: deadline, in: &state) }
            // No request starts from now on.
            state.isClosing = true
            if state.isBusy {
                state.closesAfterRequest = true
            } else {
                startClosing(&state)
            }
        }
    }

    /// Writes the closing notice and closes the socket, in a task ``closingFinished()`` awaits.
    private func startClosing(_ state: inout State) {
        let (outbound, channel, timeout, logger) = (outbound, channel, timeout, logger)
        state.closing = Task {
            logger.notice("closing a connection whose save in parts waited too long for its next part or its end")
            await ClosingNotice(WireError(.timeout, "a save in parts got no next part for \(timeout.components.seconds) s, or was not finished within its lifetime; its parts were dropped and the connection is closed"))
                .send(on: outbound, closing: channel)
        }
    }
}
