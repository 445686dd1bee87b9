import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelWire

/// The subscriptions of one connection: while it has any, one forwarding task reads the server's
/// shared ``ChangeListener`` and writes `changes` / `reconnected` event lines on the connection.
///
/// The forwarding task is two halves so that a slow client never makes signals pile up: one half
/// merges every signal into the ``SubscriptionStateMachine`` at once (at most one pending event per
/// subscription), the other writes whatever is pending whenever the socket takes more, woken through a
/// one-slot stream. The last `unsubscribe` or the connection's end cancels the task and waits for it.
///
/// ```swift
/// let subscriptions = SessionSubscriptions(listener: listener, outbound: outbound, counter: counter, logger: logger)
/// await visible.start()
/// _ = subscriptions.subscribe(id: 7, entities: nil, visible: visible)   // write the response, then:
/// subscriptions.activate(id: 7)
/// await subscriptions.close()
/// ```
final class SessionSubscriptions: Sendable {
    private struct State {
        var machine = SubscriptionStateMachine()
        var forwarder: Task<Void, Never>?
        var wake: AsyncStream<Void>.Continuation?
        var isClosed = false
    }

    private let state = NIOLockedValueBox(State())
    /// The connection's one view of change events as its user may see them, made at its first subscribe.
    private let visible = NIOLockedValueBox<VisibleChanges?>(nil)
    private let listener: ChangeListener
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private let counter: ServerCounter
    private let logger: Logger
    /// Counts the events written (``ServerMetrics``); nil counts nothing.
    private let metrics: ServerMetrics?

    init(listener: ChangeListener, outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, counter: ServerCounter, logger: Logger,
         metrics: ServerMetrics? = nil) {
        self.metrics = metrics
        self.listener = listener
        self.outbound = outbound
        self.counter = counter
        self.logger = logger
    }

    /// The connection's ``VisibleChanges``: `make`'s at the first call, the same one afterwards.
    func visibleChanges(_ make: () -> VisibleChanges) -> VisibleChanges {
        visible.withLockedValue { current in
            if let current { return current }
            let made = make()
            current = made
            return made
        }
    }

    /// Registers subscription `id` and starts forwarding if this is the connection's first. Its events
    /// are held until ``activate(id:)``, so write the `subscribe` response in between. `visible` turns
    /// each doorbell ring into what the connection's user may see (call its `start()` first).
    func subscribe(id: RequestID, entities: [String]?, visible: VisibleChanges) -> Result<Void, WireError> {
        state.withLockedValue { state in
            guard !state.isClosed else {
                return .failure(WireError(.shuttingDown, "the connection is closing"))
            }
            let result = state.machine.subscribe(id: id, entities: entities)
            if case .success = result, state.forwarder == nil {
                // Subscribing to the listener before the response goes out means no save committed after
                // the client sees the response can go unannounced.
                let signals = listener.signals()
                let (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
                state.wake = wake
                counter.add(1)
                state.forwarder = Task { [self] in
                    defer { counter.add(-1) }
                    await forward(signals, visible: visible, wakes: wakes, wake: wake)
                }
            }
            return result
        }
    }

    /// The `subscribe` response of `id` is written: its pending and future events may follow.
    func activate(id: RequestID) {
        let wake = state.withLockedValue { state -> AsyncStream<Void>.Continuation? in
            state.machine.activate(id: id)
            return state.machine.hasPendingEvents ? state.wake : nil
        }
        wake?.yield()
    }

    /// Closes subscription `id`; after the last one, stops forwarding before returning.
    func unsubscribe(id: RequestID) async -> Result<Void, WireError> {
        let (result, forwarder) = state.withLockedValue { state -> (Result<Void, WireError>, Task<Void, Never>?) in
            let result = state.machine.unsubscribe(id: id)
            guard state.machine.isEmpty else { return (result, nil) }
            return (result, takeForwarder(&state))
        }
        if let forwarder {
            forwarder.cancel()
            await forwarder.value
        }
        return result
    }

    /// Whether the connection has a subscription: its client is listening for events, not idle.
    var isListening: Bool { state.withLockedValue { !$0.machine.isEmpty } }

    /// Closes every subscription and waits for forwarding to stop: the connection is ending.
    func close() async {
        let forwarder = state.withLockedValue { state -> Task<Void, Never>? in
            state.isClosed = true
            state.machine.removeAll()
            return takeForwarder(&state)
        }
        if let forwarder {
            forwarder.cancel()
            await forwarder.value
        }
    }

    private func takeForwarder(_ state: inout State) -> Task<Void, Never>? {
        state.wake?.finish()
        state.wake = nil
        defer { state.forwarder = nil }
        return state.forwarder
    }

    private func forward(
        _ signals: AsyncStream<ChangeSignal>, visible: VisibleChanges, wakes: AsyncStream<Void>, wake: AsyncStream<Void>.Continuation
    ) async {
        // Rings that arrive while history is being read are merged into one: a single read answers them
        // all, because it reads everything after what the user was last told. So a subscriber costs one
        // history read per burst of saves rather than one per save, and a closing connection stops after
        // at most the read in flight instead of working through a backlog of rings.
        let (checks, check) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let pending = NIOLockedValueBox<ChangeSignal?>(nil)
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await signal in signals {
                    pending.withLockedValue { $0 = $0.map { Self.merge($0, signal) } ?? signal }
                    check.yield()
                }
                check.finish()
            }
            group.addTask { [state] in
                for await _ in checks {
                    guard !Task.isCancelled, let signal = pending.withLockedValue({ taken in
                        defer { taken = nil }
                        return taken
                    }) else { continue }
                    // Only what the user may see: another user's save is news only if it was shared.
                    guard let shown = await visible.filter(signal) else { continue }
                    if state.withLockedValue({ $0.machine.receive(shown) }) { wake.yield() }
                }
                // The listener closed (server shutdown): let the writer flush what is pending and end.
                wake.finish()
            }
            group.addTask { [state, outbound, logger, metrics] in
                for await _ in wakes {
                    let events = state.withLockedValue { $0.machine.takeEvents() }
                    for event in events {
                        do {
                            try await outbound.write(ByteBuffer(bytes: try WireJSON.encodeLine(event)))
                            metrics?.events.increment()
                        } catch {
                            logger.debug("event not written; the connection is closing", metadata: ["error": "\(type(of: error))"])
                            return
                        }
                    }
                }
            }
        }
    }

    /// Two rings as one: `reconnected` wins (every reader catches up anyway); otherwise the classes of
    /// both, where an empty list means "unknown", so it absorbs the other.
    static func merge(_ first: ChangeSignal, _ second: ChangeSignal) -> ChangeSignal {
        if first.kind == .reconnected || second.kind == .reconnected { return ChangeSignal(.reconnected) }
        if first.entities.isEmpty || second.entities.isEmpty { return ChangeSignal(.committed) }
        return ChangeSignal(.committed, entities: Array(Set(first.entities).union(second.entities)).sorted())
    }
}

/// A count shared by a server's connections: how many are forwarding change signals right now
/// (``LineServer/signalForwarderCount``), how many visibility reads they made
/// (``LineServer/visibilityReadCount``).
final class ServerCounter: Sendable {
    private let value = NIOLockedValueBox(0)

    func add(_ delta: Int) {
        value.withLockedValue { $0 += delta }
    }

    var count: Int { value.withLockedValue { $0 } }
}
