import Logging
import NIOConcurrencyHelpers
import NIOCore
@_spi(PGModelInternals) import PGModelWire

/// Closes a connection whose save in parts waits too long for its next part (PROTOCOL.md §4, A save in
/// parts): a `timeout` line (id null), then the socket, which drops the held parts and gives their bytes
/// back to the server's budget. Without it a client could hold its parts, and so other clients' room for
/// theirs, for as long as it kept its connection busy with other requests or a subscription. Past the
/// deadline no request starts; one in progress is not cut short, the connection closes after its answer.
///
/// The watching task runs only while a save is held.
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
        var isBusy = false
        /// The connection is being closed: no request may start any more.
        var isClosing = false
        var task: Task<Void, Never>?
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
            state.deadline = min(.now + timeout, expiry ?? .now + timeout)
            if state.task == nil { state.task = Task { [self] in await watch() } }
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
            state.isBusy = true
            return true
        }
    }

    /// The request's answer is written.
    func requestFinished() {
        state.withLockedValue { $0.isBusy = false }
    }

    /// Stops watching (the connection ended).
    func stop() {
        state.withLockedValue { $0.task }?.cancel()
    }

    /// Returns once the closing notice, if one is on its way, is written: a request refused by
    /// ``requestStarted()`` waits for it, so the connection does not close before its last word.
    func closingFinished() async {
        await state.withLockedValue { $0.task }?.value
    }

    private func watch() async {
        while true {
            // Decided under the lock `partHeld` takes: a deadline set after this sees no task and starts one.
            let wake = state.withLockedValue { state -> ContinuousClock.Instant? in
                guard let deadline = state.deadline else {
                    state.task = nil
                    return nil
                }
                return deadline
            }
            guard let wake else { return }
            do {
                try await Task.sleep(until: wake, clock: .continuous)
            } catch {
                return
            }
            let closing = state.withLockedValue { state -> Bool in
                guard let deadline = state.deadline, deadline <= .now else { return false }
                state.isClosing = true
                return true
            }
            guard closing else { continue }
            // No request starts from now on; one running finishes first, so its answer is not cut off.
            while state.withLockedValue({ $0.isBusy }) {
                do {
                    try await Task.sleep(for: .milliseconds(20))
                } catch {
                    return
                }
            }
            logger.notice("closing a connection whose save in parts waited too long for its next part or its end")
            await ClosingNotice(WireError(.timeout, "a save in parts got no next part for \(timeout.components.seconds) s, or was not finished within its lifetime; its parts were dropped and the connection is closed"))
                .send(on: outbound, closing: channel)
            return
        }
    }
}
