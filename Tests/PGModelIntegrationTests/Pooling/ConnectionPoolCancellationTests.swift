import Foundation
import Logging
import NIOPosix
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelPostgres
import PostgresNIO
import Testing

/// A caller that gives up while it waits for a pooled connection (its client went away, its request was
/// cancelled) leaves the queue at once, so a freed connection never goes to nobody.
@Suite("Connection pool: waiters that give up")
struct ConnectionPoolCancellationTests {
    static let logger: Logger = {
        var logger = Logger(label: "pgmodel.test.pool-cancel")
        logger.logLevel = .warning
        return logger
    }()

    @Test("a cancelled waiter throws CancellationError at once and leaves the queue; the next waiter gets the connection")
    func cancelledWaiterLeavesTheQueue() async throws {
        let configuration = try PostgresStoreConfiguration.parse(try TestDatabase.url())
        let pool = ConnectionPool(configuration: configuration, maximumConnections: 1, maximumIdleConnections: 1,
                                  eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: Self.logger)
        let (started, startedSignal) = AsyncStream.makeStream(of: Void.self)
        let (release, releaseSignal) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            try await pool.withConnection(scope: .trusted, deadline: .seconds(60), operation: "holder") { _ in
                startedSignal.yield()
                for await _ in release { break }
            }
        }
        for await _ in started { break }
        let givesUp = Task { try await pool.withConnection(scope: .trusted, deadline: .seconds(60), operation: "gives up") { _ in "ran" } }
        while pool.waitingCount < 1 { await Task.yield() }
        let cancelledAt = ContinuousClock.now
        givesUp.cancel()
        await #expect(throws: CancellationError.self) { try await givesUp.value }
        #expect(ContinuousClock.now - cancelledAt < .seconds(30), "it left long before its 60 s deadline")
        #expect(pool.waitingCount == 0)
        let next = Task { try await pool.withConnection(scope: .trusted, deadline: .seconds(60), operation: "next") { _ in "ran" } }
        while pool.waitingCount < 1 { await Task.yield() }
        releaseSignal.yield()
        try await holder.value
        #expect(try await next.value == "ran")
        await pool.close()
    }
}
