@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres

/// The bookkeeping of one instance's change events, without sockets or database: who listens, as
/// which user, from which token, and the doorbell rings waiting for a round of history reads.
///
/// A round reads history once per *user* with listeners — from the smallest token any of that user's
/// listeners was told — and hands every listener the transactions after its own token. Row-level
/// security decides what the read returns, so each listener sees exactly what a read of its own would
/// have shown; listeners of one user share the read, so a commit costs one read per user, not per
/// connection. Rings that arrive while a round runs are merged into the next round.
///
/// ```swift
/// var fanout = HistoryFanoutStateMachine()
/// fanout.register(1, as: .user(alice), told: 40)
/// fanout.register(2, as: .user(alice), told: 42)
/// fanout.ring(ChangeSignal(.committed))                    // true: start a round
/// guard case .read(let reads)? = fanout.beginRound() else { return }
/// // reads == [Read(requester: .user(alice), after: 40)]; read history after 40 as alice, then:
/// let signals = fanout.deliver(.success(page), to: reads[0])   // listener 1 gets 41…, listener 2 gets 43…
/// fanout.endRound()                                        // false unless rings came in meanwhile
/// ```
struct HistoryFanoutStateMachine: Sendable {
    /// One listener's handle: a connection with subscriptions.
    typealias ListenerID = UInt64

    /// One history read of a round: as `requester`, after `after`, for these listeners.
    struct Read: Hashable, Sendable {
        var requester: Requester
        var after: UInt64
        var listeners: [ListenerID]
    }

    /// What a round does.
    enum Round: Hashable, Sendable {
        /// Read history once per read and hand out the parts with ``deliver(_:to:)``.
        case read([Read])
        /// The listening connection was re-established: tell every listener, with no read.
        case reconnected([ListenerID])
    }

    private struct Listener: Sendable {
        var requester: Requester
        /// The newest history token this listener was told about.
        var told: UInt64
    }

    /// The most transactions one read returns; a full page means the listener may have missed more.
    static let pageSize = 500
    /// The most transactions and changes an event carries: a longer page stays on the server, and its
    /// client reads it in pages of its own rather than receive one long line it did not ask for.
    static let maxEventTransactions = 100
    static let maxEventChanges = 1_000

    private var listeners: [ListenerID: Listener] = [:]
    /// The ring waiting for the next round; `reconnected` absorbs `committed`.
    private var pending: ChangeSignal.Kind?
    private var isRunning = false

    /// How many listeners are registered.
    var count: Int { listeners.count }

    /// Registers `id`, listening as `requester` from token `told` (the newest it may see now).
    mutating func register(_ id: ListenerID, as requester: Requester, told: UInt64) {
        listeners[id] = Listener(requester: requester, told: told)
    }

    /// Removes `id`: a round in progress hands it nothing more.
    mutating func remove(_ id: ListenerID) {
        listeners[id] = nil
    }

    /// Merges a ring into the pending one. Returns whether a round should start now (none is running).
    mutating func ring(_ signal: ChangeSignal) -> Bool {
        pending = (pending == .reconnected || signal.kind == .reconnected) ? .reconnected : .committed
        return !isRunning
    }

    /// Takes the pending ring as a round, or nil when there is none (or one already runs).
    mutating func beginRound() -> Round? {
        guard !isRunning, let kind = pending else { return nil }
        pending = nil
        guard !listeners.isEmpty else { return nil }
        isRunning = true
        let ids = listeners.keys.sorted()
        if kind == .reconnected { return .reconnected(ids) }
        var reads: [Requester: Read] = [:]
        for id in ids {
            guard let listener = listeners[id] else { continue }
            if var read = reads[listener.requester] {
                read.after = min(read.after, listener.told)
                read.listeners.append(id)
                reads[listener.requester] = read
            } else {
                reads[listener.requester] = Read(requester: listener.requester, after: listener.told, listeners: [id])
            }
        }
        return .read(reads.values.sorted { ($0.listeners.first ?? 0) < ($1.listeners.first ?? 0) })
    }

    /// The round ended. Returns whether rings arrived meanwhile, so another round should start.
    mutating func endRound() -> Bool {
        isRunning = false
        return pending != nil && !listeners.isEmpty
    }

    /// What each listener of `read` is told of its outcome, advancing their tokens; a listener removed
    /// meanwhile is told nothing, and one with nothing visible since its token is not in the result.
    /// A failed read, or a full page that may leave more unread, yields a ring naming no class: the
    /// client then reads its history itself, which shows only what it may see.
    mutating func deliver(_ outcome: Result<HistoryPage, any Error>, to read: Read) -> [(ListenerID, ChangeSignal)] {
        var signals: [(ListenerID, ChangeSignal)] = []
        for id in read.listeners {
            guard var listener = listeners[id], listener.requester == read.requester else { continue }
            guard case .success(let page) = outcome else {
                signals.append((id, ChangeSignal(.committed)))
                continue
            }
            let after = listener.told
            if let last = page.transactions.last?.token { listener.told = max(after, last) }
            listeners[id] = listener
            if page.transactions.count >= Self.pageSize {
                signals.append((id, ChangeSignal(.committed)))
                continue
            }
            if let signal = Self.signal(after: after, page.transactions.filter { $0.token > after }) {
                signals.append((id, signal))
            }
        }
        return signals
    }

    /// The event for the visible transactions after `after`; nil when they change nothing.
    static func signal(after: UInt64, _ transactions: [HistoryRecord]) -> ChangeSignal? {
        let entities = Set(transactions.flatMap { $0.changes.map(\.entity) })
        guard !entities.isEmpty else { return nil }
        let changes = transactions.reduce(0) { $0 + $1.changes.count }
        let carried = transactions.count <= maxEventTransactions && changes <= maxEventChanges
        return ChangeSignal(.committed, entities: entities.sorted(),
                            history: carried ? ChangeSignal.VisibleHistory(after: after, transactions: transactions) : nil)
    }
}
