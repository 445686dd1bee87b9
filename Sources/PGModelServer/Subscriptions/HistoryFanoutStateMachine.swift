@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres

/// The bookkeeping of one instance's change events, without sockets or database: who listens, as
/// which user, how far each has been checked, and the doorbell rings waiting for a round.
///
/// A round is *one* read of the new history (``Read``), from the oldest position any listener has been
/// checked through, for every user with listeners at once: the database says which of them may see
/// which transaction and change (``SharedHistoryPage``), and every listener is handed its user's part
/// past its own position. So a commit costs one read however many users and connections listen.
///
/// Each listener keeps two positions: `told`, the newest transaction it was handed (an event's `after`,
/// which its client compares with its own token), and `checked`, how far history has been judged for
/// it. History it may not see moves `checked` on and leaves `told`: nothing it may see lies between
/// the two, so the next event it gets still carries everything visible after `told`. Rings that arrive
/// while a round runs are merged into the next round; a full page asks for another at once.
///
/// ```swift
/// var fanout = HistoryFanoutStateMachine()
/// fanout.register(1, as: .user(alice), told: 40, checked: 90)
/// fanout.register(2, as: .user(bob), told: 12, checked: 90)
/// fanout.ring(ChangeSignal(.committed))                    // true: start a round
/// guard case .read(let read)? = fanout.beginRound() else { return }
/// // read.after == 90, read.readers == [alice, bob]; read the shared page after 90, then:
/// let signals = fanout.deliver(.success(shared), to: read)  // each listener its user's visible part
/// fanout.endRound()                                        // false unless rings came in meanwhile
/// ```
struct HistoryFanoutStateMachine: Sendable {
    /// One listener's handle: a connection with subscriptions.
    typealias ListenerID = UInt64

    /// The one history read of a round: after `after`, judged for `readers`, handed to `listeners`.
    struct Read: Hashable, Sendable {
        var after: UInt64
        /// Every distinct requester of `listeners`, in the order of their first listener.
        var readers: [Requester]
        var listeners: [ListenerID]
    }

    /// What a round does.
    enum Round: Hashable, Sendable {
        /// Read the history page once and hand out the parts with ``deliver(_:to:)``.
        case read(Read)
        /// The listening connection was re-established: tell every listener, with no read.
        case reconnected([ListenerID])
    }

    private struct Listener: Sendable {
        var requester: Requester
        /// The newest history token this listener was handed (or could see when it registered).
        var told: UInt64
        /// The position history has been judged through for this listener: nothing it may see lies
        /// between `told` and here.
        var checked: UInt64
    }

    /// The most transactions one read returns: the bound on a round's work, whatever lies behind.
    static let pageSize = 500
    /// The most transactions and changes an event carries: a longer page stays on the server, and its
    /// client reads it in pages of its own rather than receive one long line it did not ask for.
    static let maxEventTransactions = 100
    static let maxEventChanges = 1_000

    private var listeners: [ListenerID: Listener] = [:]
    /// The ring waiting for the next round; `reconnected` absorbs `committed`.
    private var pending: ChangeSignal.Kind?
    /// A read of the running round stopped at its page size or at deleted history: read on at once.
    private var readsOn = false
    private var isRunning = false

    /// How many listeners are registered.
    var count: Int { listeners.count }

    /// Registers `id`, listening as `requester`: `told` is the newest token it may see now, `checked`
    /// the position from which it hears of commits (at least `told`; nothing it may see lies between).
    mutating func register(_ id: ListenerID, as requester: Requester, told: UInt64, checked: UInt64) {
        listeners[id] = Listener(requester: requester, told: told, checked: max(told, checked))
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
        readsOn = false
        guard !listeners.isEmpty else { return nil }
        isRunning = true
        let ids = listeners.keys.sorted()
        if kind == .reconnected { return .reconnected(ids) }
        var readers: [Requester] = []
        var seen = Set<Requester>()
        var after = UInt64.max
        for id in ids {
            guard let listener = listeners[id] else { continue }
            after = min(after, listener.checked)
            if seen.insert(listener.requester).inserted { readers.append(listener.requester) }
        }
        return .read(Read(after: after, readers: readers, listeners: ids))
    }

    /// The round ended. Returns whether another should start: rings arrived meanwhile, or a read
    /// stopped short of the newest history.
    mutating func endRound() -> Bool {
        isRunning = false
        if readsOn, pending == nil { pending = .committed }
        readsOn = false
        return pending != nil && !listeners.isEmpty
    }

    /// What each listener of `read` is told of its outcome, advancing its positions; a listener removed
    /// meanwhile is told nothing, and one with nothing visible past its position is not in the result.
    /// A failed read, or history deleted past a listener's position, yields a ring naming no class: the
    /// client then reads its history itself, which shows only what it may see.
    mutating func deliver(_ outcome: Result<SharedHistoryPage, any Error>, to read: Read) -> [(ListenerID, ChangeSignal)] {
        let page: SharedHistoryPage
        switch outcome {
        case .failure:
            return read.listeners.compactMap { id in listeners[id].map { _ in (id, ChangeSignal(.committed)) } }
        case .success(let shared):
            page = shared
        }
        if page.isFull || page.expiredThrough != nil { readsOn = true }
        let positions = Dictionary(page.readers.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        var parts: [Int: [HistoryRecord]] = [:]
        var signals: [(ListenerID, ChangeSignal)] = []
        for id in read.listeners {
            guard var listener = listeners[id] else { continue }
            let before = listener.checked
            listener.checked = max(before, page.readThrough)
            if page.expiredThrough != nil {
                listeners[id] = listener
                signals.append((id, ChangeSignal(.committed)))
                continue
            }
            // A reader the page was not judged for sees nothing of it; its position stays.
            guard let index = positions[listener.requester] else { continue }
            let part: [HistoryRecord]
            if let cached = parts[index] {
                part = cached
            } else {
                part = page.page(for: index).transactions
                parts[index] = part
            }
            let visible = part.filter { $0.token > before }
            if let last = visible.last?.token {
                if let signal = Self.signal(after: listener.told, visible) { signals.append((id, signal)) }
                listener.told = max(listener.told, last)
            }
            listeners[id] = listener
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
