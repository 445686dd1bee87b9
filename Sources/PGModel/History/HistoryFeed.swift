import Foundation
import Logging
import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres

/// The one reader of a container's history log that every observer shares.
///
/// The store's doorbell (LISTEN/NOTIFY, or `event` lines from the service) says "something committed";
/// the feed then reads the history log from its token, hands each new transaction to the registered
/// observers and advances the token. A ring through the service may carry the history the server read
/// for this user before it rang; when it covers the feed's token the feed takes it instead of reading. After a reconnect the store rings `.reconnected` and the
/// feed reads from the same token again, so nothing committed while disconnected is missed and nothing
/// is delivered twice. Positions become visible in commit order, so a read never misses one that a
/// later read could find.
///
/// All work happens on one serial loop task on the container's event loop — never the cooperative
/// pool, which callers blocked in `BlockingBridge.run` may be occupying — so registration, delivery
/// and token updates never interleave. Deliveries then run, in order, on a serial dispatch queue of the
/// feed's own: they reach user code (observation callbacks that read `results` and so fetch), which
/// must never run on an event loop, where a synchronous PGModel call would throw `wouldDeadlock`.
///
/// ```swift
/// let id = try await container.historyFeed.register { records in print(records.count) }
/// ```
final class HistoryFeed: Sendable {
    typealias Delivery = @Sendable ([HistoryRecord]) -> Void

    enum Command: Sendable {
        case signal(ChangeSignal)
        case register(Int, after: UInt64?, Delivery, CheckedContinuation<Void, any Error>)
        case unregister(Int)
        case retry
    }

    private struct State {
        var continuation: AsyncStream<Command>.Continuation?
        var nextID = 1
        var tasks: [Task<Void, Never>] = []
    }

    private let store: any ModelStore
    private let executor: EventLoopTaskExecutor
    private let logger = Logger(label: "pgmodel.history-feed")
    private let state = NIOLockedValueBox(State())
    /// Where deliveries run: off every event loop, one at a time, in the order the loop hands them over.
    private let deliveries = DispatchQueue(label: "pgmodel.history-feed.deliveries")

    init(store: any ModelStore, executor: EventLoopTaskExecutor) {
        self.store = store
        self.executor = executor
    }

    deinit {
        stop()
    }

    /// Registers `delivery` for every transaction committed after `after` (nil: after the feed's
    /// current position) and returns its id once it is live and has been handed what it missed: a save
    /// committed after this returns is delivered to it.
    func register(after: UInt64? = nil, _ delivery: @escaping Delivery) async throws -> Int {
        let (continuation, id) = startIfNeeded()
        let queue = deliveries
        let offLoop: Delivery = { records in queue.async { delivery(records) } }
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            continuation.yield(.register(id, after: after, offLoop, done))
        }
        // The gap replayed to a subscriber resuming from an older token was queued before `done`; the
        // queue is serial, so once this runs the subscriber has it (a HistoryObserver created with saved
        // tokens has counted what it missed when its init returns).
        await withCheckedContinuation { (delivered: CheckedContinuation<Void, Never>) in
            queue.async { delivered.resume() }
        }
        return id
    }

    func unregister(_ id: Int) {
        let continuation = state.withLockedValue { $0.continuation }
        continuation?.yield(.unregister(id))
    }

    /// Ends the loop; pending registrations fail.
    func stop() {
        let (continuation, tasks) = state.withLockedValue { state in
            defer { state.continuation = nil; state.tasks = [] }
            return (state.continuation, state.tasks)
        }
        continuation?.finish()
        for task in tasks { task.cancel() }
    }

    private func startIfNeeded() -> (AsyncStream<Command>.Continuation, Int) {
        state.withLockedValue { state in
            let id = state.nextID
            state.nextID += 1
            if let continuation = state.continuation { return (continuation, id) }
            let (commands, continuation) = AsyncStream.makeStream(of: Command.self)
            state.continuation = continuation
            let loop = HistoryFeedLoop(store: store, commands: continuation, executor: executor, logger: logger)
            let signals = store.changeSignals()
            state.tasks.append(Task(executorPreference: executor) {
                await loop.run(commands)
            })
            state.tasks.append(Task(executorPreference: executor) {
                for await signal in signals { continuation.yield(.signal(signal)) }
            })
            return (continuation, id)
        }
    }
}

/// The feed's serial state: its token and its subscribers. Only the loop task touches it.
private final class HistoryFeedLoop: @unchecked Sendable {
    // @unchecked: used by exactly one task (the loop), sequentially.
    private struct Subscriber {
        var after: UInt64
        let deliver: HistoryFeed.Delivery
    }

    private let store: any ModelStore
    private let commands: AsyncStream<HistoryFeed.Command>.Continuation
    private let executor: EventLoopTaskExecutor
    private let logger: Logger
    private var token: UInt64?
    private var subscribers: [Int: Subscriber] = [:]
    private var retryScheduled = false
    private var retryDelay: Duration = .milliseconds(10)
    private static let pageSize = 500

    init(store: any ModelStore, commands: AsyncStream<HistoryFeed.Command>.Continuation, executor: EventLoopTaskExecutor, logger: Logger) {
        self.store = store
        self.commands = commands
        self.executor = executor
        self.logger = logger
    }

    func run(_ stream: AsyncStream<HistoryFeed.Command>) async {
        for await command in stream {
            switch command {
            case .signal(let signal):
                if let history = signal.history, take(history) { continue }
                await catchUp()
            case .retry:
                retryScheduled = false
                await catchUp()
            case .register(let id, let after, let deliver, let done):
                do {
                    _ = try await position()
                    // Deliver what is already committed to the existing subscribers first, so the new one
                    // starts at the newest visible transaction and sees only what commits later.
                    await catchUp()
                    let current = token ?? 0
                    var subscriber = Subscriber(after: after ?? current, deliver: deliver)
                    if subscriber.after < current {
                        // Resuming from an older token: replay its gap to it alone.
                        try await replay(to: &subscriber, through: current)
                    }
                    subscribers[id] = subscriber
                    done.resume()
                } catch {
                    done.resume(throwing: error)
                }
            case .unregister(let id):
                subscribers[id] = nil
            }
        }
        for id in subscribers.keys.sorted() { subscribers[id]?.deliver([]) }
        subscribers = [:]
    }

    /// The feed's token, read from the store the first time: the newest visible transaction.
    private func position() async throws -> UInt64 {
        if let token { return token }
        let page = try await store.fetchHistory(HistoryRequest(newestFirst: true, limit: 1))
        let current = page.transactions.first?.token ?? 0
        token = current
        // Anything committed between this read and the store's LISTEN taking effect is found by the
        // catch-up the first `.reconnected`/`.committed` signal triggers, or by this retry.
        scheduleRetry()
        return current
    }

    private func replay(to subscriber: inout Subscriber, through limit: UInt64) async throws {
        while subscriber.after < limit {
            let request = HistoryRequest(filter: .and([.token(.greater, subscriber.after), .token(.lessOrEqual, limit)]), limit: Self.pageSize)
            let page = try await store.fetchHistory(request)
            guard let last = page.transactions.last else { break }
            subscriber.deliver(page.transactions)
            subscriber.after = last.token
        }
    }

    /// Delivers the part of `history` past the feed's token, when `history` covers it: every transaction
    /// the user may see after `history.after`, so with `after` at or before the token nothing between is
    /// missing. Returns false when it does not, and the feed must read.
    private func take(_ history: ChangeSignal.VisibleHistory) -> Bool {
        guard let current = token, history.after <= current else { return false }
        deliver(history.transactions.filter { $0.token > current })
        return true
    }

    /// Hands `transactions` (newer than the feed's token, in order) to every subscriber that has not
    /// had them, and moves the token to the last.
    private func deliver(_ transactions: [HistoryRecord]) {
        guard let last = transactions.last?.token else { return }
        token = last
        // In registration order (ids grow), so observers hear a page in the same order every run.
        for id in subscribers.keys.sorted() {
            guard let subscriber = subscribers[id] else { continue }
            let fresh = transactions.filter { $0.token > subscriber.after }
            guard !fresh.isEmpty else { continue }
            subscribers[id]?.after = last
            subscriber.deliver(fresh)
        }
    }

    private func catchUp() async {
        guard let start = token else { return }
        var current = start
        do {
            while true {
                let page = try await store.fetchHistory(HistoryRequest(filter: .token(.greater, current), limit: Self.pageSize))
                if let last = page.transactions.last {
                    current = last.token
                    deliver(page.transactions)
                }
                if page.transactions.count == Self.pageSize { continue }
                retryDelay = .milliseconds(10)
                return
            }
        } catch {
            // Stopped (its container closed) while reading: the store's pool is closing too; nothing to retry.
            if Task.isCancelled { return }
            logger.warning("reading history failed; retrying", metadata: ["error": "\(error)"])
            scheduleRetry()
        }
    }

    private func scheduleRetry() {
        guard !retryScheduled else { return }
        retryScheduled = true
        let delay = retryDelay
        retryDelay = min(retryDelay * 2, .seconds(2))
        let commands = commands
        Task(executorPreference: executor) {
            try? await Task.sleep(for: delay)
            commands.yield(.retry)
        }
    }
}
