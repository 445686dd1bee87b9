@_spi(PGModelInternals) @testable import PGModelIO
@_spi(PGModelInternals) @testable import PGModelPostgres
import Testing


/// The pool's decisions, without sockets: bounded, first come first served, and a free slot is never
/// left unused while a lease waits.
@Suite("ConnectionPoolStateMachine")
struct ConnectionPoolStateMachineTests {
    typealias Machine = ConnectionPoolStateMachine<Int>

    @Test("leases open connections up to the maximum, then wait in line")
    func boundedWithWaiters() {
        var pool = Machine(maximum: 2, maximumIdle: 2)
        #expect(pool.lease(waiterID: 1) == .connect)
        #expect(pool.lease(waiterID: 2) == .connect)
        #expect(pool.lease(waiterID: 3) == .wait)
        #expect(pool.lease(waiterID: 4) == .wait)
        #expect(pool.open == 2)
        #expect(pool.waiters == [3, 4])
    }

    @Test("a released connection goes to the first waiter, then is kept idle for the next lease")
    func releaseHandsOffInOrder() {
        var pool = Machine(maximum: 1, maximumIdle: 1)
        #expect(pool.lease(waiterID: 1) == .connect)
        #expect(pool.lease(waiterID: 2) == .wait)
        #expect(pool.lease(waiterID: 3) == .wait)
        #expect(pool.release(10, isUsable: true) == .handOff(10, waiterID: 2))
        #expect(pool.release(10, isUsable: true) == .handOff(10, waiterID: 3))
        #expect(pool.release(10, isUsable: true) == .keep)
        #expect(pool.lease(waiterID: 4) == .use(10))
        #expect(pool.open == 1)
    }

    @Test("idle connections beyond maximumIdle are closed and their slots freed")
    func idleCap() {
        var pool = Machine(maximum: 3, maximumIdle: 1)
        for id in 1...3 { #expect(pool.lease(waiterID: id) == .connect) }
        #expect(pool.release(10, isUsable: true) == .keep)
        #expect(pool.release(11, isUsable: true) == .close(11))
        #expect(pool.release(12, isUsable: true) == .close(12))
        #expect(pool.open == 1)
        #expect(pool.idle == [10])
    }

    @Test("an idle connection that closed meanwhile is skipped and its slot reused")
    func unusableIdleIsDropped() {
        var pool = Machine(maximum: 1, maximumIdle: 1)
        #expect(pool.lease(waiterID: 1) == .connect)
        #expect(pool.release(10, isUsable: true) == .keep)
        #expect(pool.lease(waiterID: 2) { _ in false } == .connect)
        #expect(pool.open == 1)
        #expect(pool.idle.isEmpty)
    }

    @Test("a failed connect or a broken connection lets the first waiter open one itself, at once")
    func failuresWakeAWaiterToConnect() {
        var pool = Machine(maximum: 1, maximumIdle: 1)
        #expect(pool.lease(waiterID: 1) == .connect)
        #expect(pool.lease(waiterID: 2) == .wait)
        #expect(pool.lease(waiterID: 3) == .wait)
        #expect(pool.connectFailed() == 2)
        #expect(pool.open == 1, "the slot passed to waiter 2")
        #expect(pool.release(10, isUsable: false) == .wakeToConnect(waiterID: 3))
        #expect(pool.open == 1)
        #expect(pool.release(11, isUsable: false) == .discard)
        #expect(pool.open == 0)
    }

    @Test("a waiter that gives up leaves the line; one already woken must give back what it got")
    func cancellation() {
        var pool = Machine(maximum: 1, maximumIdle: 1)
        #expect(pool.lease(waiterID: 1) == .connect)
        #expect(pool.lease(waiterID: 2) == .wait)
        #expect(pool.lease(waiterID: 3) == .wait)
        let leftTheLine = pool.cancel(waiterID: 2)
        #expect(leftTheLine)
        #expect(pool.release(10, isUsable: true) == .handOff(10, waiterID: 3))
        let alreadyWoken = !pool.cancel(waiterID: 3)
        #expect(alreadyWoken)
    }

    @Test("closing returns the idle connections and the waiters; later leases and releases close")
    func closing() {
        var pool = Machine(maximum: 2, maximumIdle: 2)
        #expect(pool.lease(waiterID: 1) == .connect)
        #expect(pool.lease(waiterID: 2) == .connect)
        #expect(pool.release(10, isUsable: true) == .keep)
        #expect(pool.lease(waiterID: 3) == .use(10))
        #expect(pool.release(10, isUsable: true) == .keep)
        #expect(pool.lease(waiterID: 4) == .use(10))
        #expect(pool.lease(waiterID: 5) == .wait)
        let (idle, waiters) = pool.close()
        #expect(idle.isEmpty)
        #expect(waiters == [5])
        #expect(pool.lease(waiterID: 6) == .closed)
        #expect(pool.release(10, isUsable: true) == .close(10))
        #expect(pool.release(11, isUsable: false) == .discard)
        #expect(pool.open == 0)
    }

    @Test("a lease prefers the most recent idle connection it prefers (one in its scope), else the most recent idle one")
    func preferredIdleConnection() {
        var pool = Machine(maximum: 3, maximumIdle: 3)
        for id in 1...3 { #expect(pool.lease(waiterID: id) == .connect) }
        #expect(pool.release(10, isUsable: true) == .keep)
        #expect(pool.release(11, isUsable: true) == .keep)
        #expect(pool.release(12, isUsable: true) == .keep)
        #expect(pool.lease(waiterID: 4, preferring: { $0 == 10 || $0 == 11 }) == .use(11))
        #expect(pool.lease(waiterID: 5, preferring: { $0 == 99 }) == .use(12))
        #expect(pool.idle == [10])
        #expect(pool.release(12, isUsable: true) == .keep)
        #expect(pool.release(11, isUsable: true) == .keep)
        // A preferred connection that stopped working is dropped and the next one taken.
        #expect(pool.lease(waiterID: 6, isUsable: { $0 != 12 }, preferring: { $0 == 10 || $0 == 12 }) == .use(10))
        #expect(pool.idle == [11])
        #expect(pool.open == 2)
        #expect(pool.lease(waiterID: 7, preferring: { $0 == 10 }) == .use(11))
        #expect(pool.lease(waiterID: 8) == .connect)
        #expect(pool.lease(waiterID: 9, preferring: { _ in true }) == .wait)
    }

    @Test func theHighestRankedIdleConnectionWinsAndTiesGoToTheMostRecent() {
        var pool = ConnectionPoolStateMachine<Int>(maximum: 4, maximumIdle: 4)
        for id in 1...4 { #expect(pool.lease(waiterID: id) == .connect) }
        for connection in [10, 11, 12, 13] { #expect(pool.release(connection, isUsable: true) == .keep) }
        // Scope (2) outranks the caller's event loop (1); the pool's own order breaks ties.
        let rank: (Int) -> Int = { [10: 2, 11: 1, 12: 3, 13: 0][$0] ?? 0 }
        #expect(pool.lease(waiterID: 5, rank: rank) == .use(12))
        #expect(pool.lease(waiterID: 6, rank: rank) == .use(10))
        #expect(pool.lease(waiterID: 7, rank: { _ in 0 }) == .use(13))
        #expect(pool.lease(waiterID: 8, rank: rank) == .use(11))
        #expect(pool.idle.isEmpty)
        #expect(pool.lease(waiterID: 9, rank: rank) == .wait)
    }

    @Test("a lease from an event loop with no idle connection of its own opens one there, up to the local limit")
    func aLeaseOpensALocalConnectionUpToTheLimit() {
        var pool = ConnectionPoolStateMachine<Int>(maximum: 4, maximumIdle: 2)
        #expect(pool.lease(waiterID: 1) == .connect)
        #expect(pool.release(10, isUsable: true) == .keep)
        // Loop A's connection is 10; a lease on loop B finds none of its own and opens one, leaving 10 idle.
        let onA: (Int) -> Bool = { $0 == 10 }
        let onB: (Int) -> Bool = { $0 == 11 }
        #expect(pool.lease(waiterID: 2, rank: { _ in 0 }, isLocal: onB, localLimit: 2) == .connect)
        #expect(pool.idle == [10])
        #expect(pool.open == 2)
        #expect(pool.release(11, isUsable: true) == .keep)
        // Each loop now takes its own, whatever their order in the idle list.
        #expect(pool.lease(waiterID: 3, rank: { onB($0) ? 1 : 0 }, isLocal: onB, localLimit: 2) == .use(11))
        #expect(pool.lease(waiterID: 4, rank: { onA($0) ? 1 : 0 }, isLocal: onA, localLimit: 2) == .use(10))
        #expect(pool.release(10, isUsable: true) == .keep)
        #expect(pool.release(11, isUsable: true) == .keep)
        // At the limit a third loop takes what is idle instead of opening more; without a limit (a caller on
        // no event loop) nothing is opened for locality.
        #expect(pool.lease(waiterID: 5, rank: { _ in 0 }, isLocal: { $0 == 12 }, localLimit: 2) == .use(11))
        #expect(pool.lease(waiterID: 6, rank: { _ in 0 }, isLocal: { _ in false }, localLimit: 0) == .use(10))
        #expect(pool.open == 2)
    }
}
