@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO

/// The decisions of a bounded connection pool, without sockets or threads: which connection a lease
/// gets, when a new one may be opened, who waits and who is woken. ``ConnectionPool`` carries them out.
///
/// At most `maximum` connections are open or being opened. A lease takes an idle connection, or opens a
/// new one while below the maximum, or waits in line. A released connection goes to the first waiter;
/// a connection that closed, or an attempt to open one that failed, frees a slot that the first waiter
/// then opens itself — so a database that is down fails each caller at once with its own connection
/// error instead of keeping it waiting for a pool that retries in the background.
///
/// ```swift
/// var pool = ConnectionPoolStateMachine<Int>(maximum: 2, maximumIdle: 1)
/// #expect(pool.lease(waiterID: 1) == .connect)
/// ```
package struct ConnectionPoolStateMachine<Connection: Equatable & Sendable>: Sendable {
    /// What a lease does next.
    package enum LeaseAction: Equatable, Sendable {
        /// Use this idle connection.
        case use(Connection)
        /// Open a new connection (a slot is reserved); report with ``connected()`` or ``connectFailed()``.
        case connect
        /// Wait: ``WaiterWakeUp`` comes through the release, failure or cancellation that frees a slot.
        case wait
        /// The pool is closed.
        case closed
    }

    /// How a waiting lease is woken.
    package enum WaiterWakeUp: Equatable, Sendable {
        /// Take this connection, released by another lease.
        case use(Connection)
        /// Open a connection in the slot another lease freed.
        case connect
        /// The pool closed while it waited.
        case closed
    }

    /// What to do with a connection given back.
    package enum ReleaseAction: Equatable, Sendable {
        /// Kept idle for the next lease.
        case keep
        /// Close it: the pool has enough idle connections, or is closed.
        case close(Connection)
        /// Hand it to this waiter.
        case handOff(Connection, waiterID: Int)
        /// It was unusable (closed); this waiter opens a new one in its slot.
        case wakeToConnect(waiterID: Int)
        /// It was unusable and nobody waits: its slot is simply free.
        case discard
    }

    package let maximum: Int
    package let maximumIdle: Int
    /// Idle connections, most recently used last.
    package private(set) var idle: [Connection] = []
    /// Connections leased, idle or being opened.
    package private(set) var open = 0
    /// Waiting leases, first come first served.
    package private(set) var waiters: [Int] = []
    package private(set) var isClosed = false

    package init(maximum: Int, maximumIdle: Int) {
        self.maximum = max(1, maximum)
        self.maximumIdle = max(0, min(maximumIdle, self.maximum))
    }

    /// A lease by `waiterID` (unique per lease). `isUsable` tells whether an idle connection still works;
    /// one that does not is dropped and its slot reused. The most recently used idle connection for which
    /// `isPreferred` holds (one already in the lease's scope) is taken before any other idle one.
    package mutating func lease(waiterID: Int, isUsable: (Connection) -> Bool = { _ in true },
                                preferring isPreferred: (Connection) -> Bool = { _ in false }) -> LeaseAction {
        lease(waiterID: waiterID, isUsable: isUsable, rank: { isPreferred($0) ? 1 : 0 })
    }

    /// A lease by `waiterID` (unique per lease). `isUsable` tells whether an idle connection still works;
    /// one that does not is dropped and its slot reused. Among idle connections the highest `rank` wins,
    /// and among equal ranks the most recently used: the pool ranks a connection already in the lease's
    /// scope (saves a round trip) above one on the caller's own event loop (saves two thread wake-ups).
    ///
    /// With `localLimit` above zero, a lease that finds no idle connection for which `isLocal` holds (one
    /// on the caller's event loop) opens a new one while fewer than `localLimit` are open, leaving the idle
    /// ones for other leases: a connection's requests then settle on a database connection of their own
    /// loop instead of crossing to another thread for each statement.
    package mutating func lease(waiterID: Int, isUsable: (Connection) -> Bool = { _ in true },
                                rank: (Connection) -> Int,
                                isLocal: (Connection) -> Bool = { _ in true }, localLimit: Int = 0) -> LeaseAction {
        guard !isClosed else { return .closed }
        if localLimit > 0, open < min(localLimit, maximum), !idle.contains(where: isLocal) {
            open += 1
            return .connect
        }
        while !idle.isEmpty {
            var best = idle.count - 1
            var bestRank = rank(idle[best])
            var index = best - 1
            while index >= 0 {
                let candidate = rank(idle[index])
                if candidate > bestRank { best = index; bestRank = candidate }
                index -= 1
            }
            let connection = idle.remove(at: best)
            if isUsable(connection) { return .use(connection) }
            open -= 1
        }
        if open < maximum {
            open += 1
            return .connect
        }
        waiters.append(waiterID)
        return .wait
    }

    /// An opened connection is in use: nothing changes (its slot was reserved by `.connect`).
    package mutating func connected() {}

    /// Opening a connection failed: its slot is free again, and the first waiter (if any) tries next.
    package mutating func connectFailed() -> Int? {
        open -= 1
        return wakeOneToConnect()
    }

    /// A leased connection comes back; `isUsable` is false when it closed (a deadline closed it, or the
    /// server went away).
    package mutating func release(_ connection: Connection, isUsable: Bool) -> ReleaseAction {
        guard isUsable, !isClosed else {
            open -= 1
            if !isUsable, let waiter = wakeOneToConnect() { return .wakeToConnect(waiterID: waiter) }
            return isUsable ? .close(connection) : .discard
        }
        if !waiters.isEmpty {
            return .handOff(connection, waiterID: waiters.removeFirst())
        }
        if idle.count >= maximumIdle {
            open -= 1
            return .close(connection)
        }
        idle.append(connection)
        return .keep
    }

    /// A waiter gave up (deadline or cancellation). Returns false when it was already woken: then it
    /// holds a connection or a slot and must give it back.
    package mutating func cancel(waiterID: Int) -> Bool {
        guard let index = waiters.firstIndex(of: waiterID) else { return false }
        waiters.remove(at: index)
        return true
    }

    /// Closes the pool: the idle connections to close, and the waiters to wake with `.closed`.
    package mutating func close() -> (idle: [Connection], waiters: [Int]) {
        isClosed = true
        let result = (idle, waiters)
        open -= idle.count
        idle = []
        waiters = []
        return result
    }

    private mutating func wakeOneToConnect() -> Int? {
        guard !isClosed, !waiters.isEmpty, open < maximum else { return nil }
        open += 1
        return waiters.removeFirst()
    }
}
