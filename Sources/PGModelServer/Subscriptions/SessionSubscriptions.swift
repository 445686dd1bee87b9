import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelWire

/// The subscriptions of one connection: while it has any, the connection is registered with the
/// instance's ``HistoryFanout``, which hands it the change events its user may see, and one writer task
/// writes `changes` / `reconnected` event lines on the connection.
///
/// A slow client never makes events pile up: the fanout merges each event into the
/// ``SubscriptionStateMachine`` at once (at most one pending event per subscription), and the writer
/// writes whatever is pending whenever the socket takes more, woken through a one-slot stream. The last
/// `unsubscribe` or the connection's end leaves the fanout, cancels the writer and waits for it.
///
/// ```swift
/// let subscriptions = SessionSubscriptions(fanout: fanout, outbound: outbound, counter: counter, logger: logger)
/// await subscriptions.listen(as: .user(alice))
/// _ = subscriptions.subscribe(id: 7, entities: nil)   // write the response, then:
/// subscriptions.activate(id: 7)
/// await subscriptions.close()
/// ```
final class SessionSubscriptions: Sendable {
    private struct State {
        var machine = SubscriptionStateMachine()
        var forwarder: Task<Void, Never>?
        var wake: AsyncStream<Void>.Continuation?
        /// This connection in the fanout, while it listens.
        var listener: HistoryFanoutStateMachine.ListenerID?
        /// The fanout ended (server shutdown): the writer flushes what is pending and stops.
        var isEnded = false
        var isClosed = false
    }

    private let state = NIOLockedValueBox(State())
    private let fanout: HistoryFanout
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private let counter: ServerCounter
    private let logger: Logger
    /// Counts the events written (``ServerMetrics``); nil counts nothing.
    private let metrics: ServerMetrics?

    init(fanout: HistoryFanout, outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, counter: ServerCounter, logger: Logger,
         metrics: ServerMetrics? = nil) {
        self.metrics = metrics
        self.fanout = fanout
        self.outbound = outbound
        self.counter = counter
        self.logger = logger
    }

    /// Registers the connection with the fanout as `requester`, unless it listens already. Call it
    /// before the `subscribe` response goes out: no save committed after the client sees the response
    /// can go unannounced.
    func listen(as requester: Requester) async {
        guard state.withLockedValue({ $0.listener == nil && !$0.isClosed }) else { return }
        let delivery = HistoryFanout.Delivery(
            receive: { [weak self] signal in self?.receive(signal) },
            end: { [weak self] in self?.end() })
        let id = await fanout.register(as: requester, delivery)
        let kept = state.withLockedValue { state -> Bool in
            guard state.listener == nil, !state.isClosed else { return false }
            state.listener = id
            return true
        }
        if !kept { fanout.remove(id) }
    }

    /// Registers subscription `id` and starts the writer if this is the connection's first. Its events
    /// are held until ``activate(id:)``, so write the `subscribe` response in between; call
    /// ``listen(as:)`` first.
    func subscribe(id: RequestID, entities: [String]?) -> Result<Void, WireError> {
        state.withLockedValue { state in
            guard !state.isClosed else {
                return .failure(WireError(.shuttingDown, "the connection is closing"))
            }
            let result = state.machine.subscribe(id: id, entities: entities)
            if case .success = result, state.forwarder == nil {
                let (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
                state.wake = wake
                if state.isEnded { wake.finish() }
                counter.add(1)
                state.forwarder = Task { [self] in
                    defer { counter.add(-1) }
                    await write(wakes)
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

    /// Closes subscription `id`; after the last one, leaves the fanout and stops the writer before returning.
    func unsubscribe(id: RequestID) async -> Result<Void, WireError> {
        let (result, forwarder, listener) = state.withLockedValue {
            state -> (Result<Void, WireError>, Task<Void, Never>?, HistoryFanoutStateMachine.ListenerID?) in
            let result = state.machine.unsubscribe(id: id)
            guard state.machine.isEmpty else { return (result, nil, nil) }
            defer { state.listener = nil }
            return (result, takeForwarder(&state), state.listener)
        }
        if let listener { fanout.remove(listener) }
        if let forwarder {
            forwarder.cancel()
            await forwarder.value
        }
        return result
    }

    /// Whether the connection has a subscription: its client is listening for events, not idle.
    var isListening: Bool { state.withLockedValue { !$0.machine.isEmpty } }

    /// Closes every subscription, leaves the fanout and waits for the writer to stop: the connection is ending.
    func close() async {
        let (forwarder, listener) = state.withLockedValue { state -> (Task<Void, Never>?, HistoryFanoutStateMachine.ListenerID?) in
            state.isClosed = true
            state.machine.removeAll()
            defer { state.listener = nil }
            return (takeForwarder(&state), state.listener)
        }
        if let listener { fanout.remove(listener) }
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

    /// An event from the fanout: merged into the pending ones at once, never waiting for the socket.
    private func receive(_ signal: ChangeSignal) {
        let wake = state.withLockedValue { state -> AsyncStream<Void>.Continuation? in
            guard !state.isClosed, state.machine.receive(signal) else { return nil }
            return state.wake
        }
        wake?.yield()
    }

    /// The fanout ended (the listener closed at server shutdown): the writer flushes what is pending and ends.
    private func end() {
        let wake = state.withLockedValue { state -> AsyncStream<Void>.Continuation? in
            state.isEnded = true
            return state.wake
        }
        wake?.finish()
    }

    private func write(_ wakes: AsyncStream<Void>) async {
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

/// A count shared by a server's connections: how many are forwarding change signals right now
/// (``LineServer/signalForwarderCount``), how many visibility reads the fanout made
/// (``LineServer/visibilityReadCount``).
final class ServerCounter: Sendable {
    private let value = NIOLockedValueBox(0)

    func add(_ delta: Int) {
        value.withLockedValue { $0 += delta }
    }

    var count: Int { value.withLockedValue { $0 } }
}
