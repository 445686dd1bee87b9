import Foundation
import Logging
import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres

/// Change events for every subscribed connection of one instance, from one reader of the doorbell.
///
/// The doorbell rings for every save in the store. On a ring, this reads the history committed since
/// then *once*, as the database owner and a bounded page at a time, with the database's answer of which
/// subscribed user may see which transaction and change (the same rules row-level security applies to
/// a user's own history read, evaluated for all of them in one query: ``SharedHistoryPage``). Each
/// connection is handed its user's part past the position it was last checked through — an event naming
/// the classes of the visible changes and carrying them when short, or nothing when none is visible. So
/// a user learns of another's save only when it touched a record shared with them, and a commit costs
/// one read however many users and connections listen.
///
/// Rings that arrive while a read runs are merged into one more round: a burst of saves costs one round.
/// Handing out never waits for a connection: each merges the event into its own pending ones.
///
/// ```swift
/// let fanout = HistoryFanout(listener: listener, gateway: gateway, reads: ServerCounter(), logger: logger)
/// let running = Task { await fanout.run() }       // until the listener closes
/// let listener = await fanout.register(as: .user(alice), HistoryFanout.Delivery(receive: { forward($0) }, end: {}))
/// fanout.remove(listener)                         // the connection closed
/// ```
final class HistoryFanout: Sendable {
    /// How a listener is told: `receive` takes each event (and must not block), `end` says no more come.
    struct Delivery: Sendable {
        var receive: @Sendable (ChangeSignal) -> Void
        var end: @Sendable () -> Void
    }

    private struct State {
        var machine = HistoryFanoutStateMachine()
        var deliveries: [HistoryFanoutStateMachine.ListenerID: Delivery] = [:]
        var nextID: HistoryFanoutStateMachine.ListenerID = 1
        var isEnded = false
    }


    private let state = NIOLockedValueBox(State())
    private let signals: AsyncStream<ChangeSignal>
    private let gateway: DatabaseGateway
    private let reads: ServerCounter
    private let rounds: ServerCounter
    private let logger: Logger
    /// Records how far behind the newest history each read is (``ServerMetrics``); nil records nothing.
    private let metrics: ServerMetrics?

    /// Starts listening to `listener` at once, so no ring after this call is lost; ``run()`` reads them.
    init(listener: ChangeListener, gateway: DatabaseGateway, reads: ServerCounter, rounds: ServerCounter = ServerCounter(),
         logger: Logger, metrics: ServerMetrics? = nil) {
        self.rounds = rounds
        self.signals = listener.signals()
        self.gateway = gateway
        self.reads = reads
        self.logger = logger
        self.metrics = metrics
    }

    /// How many connections are registered.
    var listenerCount: Int { state.withLockedValue { $0.machine.count } }

    /// Registers a connection listening as `requester`, from the newest history token it may see now:
    /// call it before the `subscribe` response goes out, and what commits later is what it will hear of.
    /// It is checked from the store's horizon taken first, so history before it is never judged for it.
    func register(as requester: Requester, _ delivery: Delivery) async -> HistoryFanoutStateMachine.ListenerID {
        let horizon = try? await gateway.historyHorizon()
        let newest = try? await gateway.fetchHistory(HistoryRequest(newestFirst: true, limit: 1), as: requester)
        let told = newest?.transactions.first?.token ?? 0
        let (id, ended) = state.withLockedValue { state in
            let id = state.nextID
            state.nextID += 1
            guard !state.isEnded else { return (id, true) }
            state.machine.register(id, as: requester, told: told, checked: horizon ?? told)
            state.deliveries[id] = delivery
            return (id, false)
        }
        if ended { delivery.end() }
        return id
    }

    /// Removes a connection: it is told nothing more, not even by a round in progress.
    func remove(_ id: HistoryFanoutStateMachine.ListenerID) {
        state.withLockedValue { state in
            state.machine.remove(id)
            state.deliveries[id] = nil
        }
    }

    /// Reads the doorbell until the listener closes, then tells every connection no more events come.
    func run() async {
        let (checks, check) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        await withDiscardingTaskGroup { group in
            group.addTask { [state, signals] in
                for await signal in signals {
                    if state.withLockedValue({ $0.machine.ring(signal) }) { check.yield() }
                }
                check.finish()
            }
            group.addTask {
                for await _ in checks {
                    while let round = self.state.withLockedValue({ $0.machine.beginRound() }) {
                        await self.perform(round)
                        guard self.state.withLockedValue({ $0.machine.endRound() }) else { break }
                    }
                }
            }
        }
        let ended = state.withLockedValue { state -> [Delivery] in
            state.isEnded = true
            defer { state.deliveries = [:] }
            return Array(state.deliveries.values)
        }
        for delivery in ended { delivery.end() }
    }

    private func perform(_ round: HistoryFanoutStateMachine.Round) async {
        switch round {
        case .reconnected(let ids):
            let deliveries = state.withLockedValue { state in ids.compactMap { state.deliveries[$0] } }
            for delivery in deliveries { delivery.receive(ChangeSignal(.reconnected)) }
        case .read(let read):
            rounds.add(1)
            await perform(read)
        }
    }

    /// The round's one read, handed out to every listener of it.
    private func perform(_ read: HistoryFanoutStateMachine.Read) async {
        reads.add(1)
        let outcome: Result<SharedHistoryPage, any Error>
        do {
            let page = try await gateway.fetchSharedHistory(after: read.after, limit: HistoryFanoutStateMachine.pageSize, for: read.readers)
            // The lag of what subscribers get: transactions nobody here may see (another user's, another
            // instance's subscribers') are passed over, not brought.
            let everything = page.readers.contains(.trusted)
            let oldestBrought = page.transactions.first { everything || !(page.transactionReaders[$0.transactionIdentifier] ?? []).isEmpty }
            metrics?.recordHistoryRead(oldestCommitted: oldestBrought?.timestamp)
            outcome = .success(page)
        } catch {
            logger.debug("reading history for change events failed", metadata: ["error": "\(LogText("\(error)"))"])
            outcome = .failure(error)
        }
        let handed = state.withLockedValue { state in
            state.machine.deliver(outcome, to: read).compactMap { id, signal in state.deliveries[id].map { ($0, signal) } }
        }
        for (delivery, signal) in handed { delivery.receive(signal) }
    }
}
