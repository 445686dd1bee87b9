import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
@_spi(PGModelInternals) import PGModelCore
import PostgresNIO

/// The streaming standbys reads may go to, one connection pool each, and the rule that keeps
/// read-your-writes: a read by a caller whose last commit ended at position P runs on a standby only once
/// that standby has replayed P (``ReplicaRouting``). A standby further behind is asked again, with short
/// pauses, until the configuration's wait (``PostgresStoreConfiguration/replicaWait``) is over; then the
/// read goes to the primary. A standby that fails (gone, restarting, refusing connections) is left out
/// for a while and its reads go to the primary: a read never fails because a standby did.
///
/// ```swift
/// let replicas = ReplicaSet(configuration: configuration, maximumConnections: 10, eventLoopGroup: group, logger: logger)
/// let rows = try await replicas?.read(after: lastCommit, scope: .trusted, deadline: .seconds(30), operation: "fetch",
///                                     onPrimary: { try await primaryFetch() }) { connection in try await fetch(on: connection) }
/// ```
package final class ReplicaSet: Sendable {
    private let pools: [ConnectionPool]
    private let routing: NIOLockedValueBox<ReplicaRouting>
    /// The longest a read waits for a standby to catch up.
    let wait: Duration
    /// How long a failed standby is left out of reads before it is tried again.
    static let downTime: Duration = .seconds(2)
    private let counts = NIOLockedValueBox((replica: 0, primary: 0))
    private let metrics: StoreMetrics
    private let logger: Logger

    /// The standbys of `configuration`, or `nil` when it names none.
    package init?(configuration: PostgresStoreConfiguration, maximumConnections: Int, eventLoopGroup: any EventLoopGroup,
                  statementLog: StatementLog? = nil, statementTracing: StatementTracing? = nil, logger: Logger) {
        let replicas = configuration.replicaConfigurations
        guard !replicas.isEmpty else { return nil }
        pools = replicas.map { replica in
            ConnectionPool(configuration: replica, maximumConnections: maximumConnections,
                           maximumIdleConnections: min(maximumConnections, 4), eventLoopGroup: eventLoopGroup,
                           statementLog: statementLog, statementTracing: statementTracing, metricsName: "replica", logger: logger)
        }
        routing = NIOLockedValueBox(ReplicaRouting(replicas: replicas.count))
        wait = configuration.replicaWait
        metrics = StoreMetrics(configuration: configuration)
        self.logger = logger
    }

    /// Reads served by a standby and by the primary since the set was made (`read(…)` calls only).
    ///
    /// ```swift
    /// let (onStandby, onPrimary) = replicas.servedReads
    /// ```
    package var servedReads: (replica: Int, primary: Int) { counts.withLockedValue { $0 } }

    /// Name of the counter of reads by where they were served (`served_by` = `replica` or `primary`).
    package static let readsTotal = "pgmodel_replica_reads_total"

    /// Runs `body` on a standby that has replayed `position` (any standby when `nil`), else `onPrimary`.
    package func read<T: Sendable>(after position: LogSequenceNumber?, scope: ConnectionScope, deadline: TimeAmount,
                                   budget: RequestBudget, operation: String,
                                   onPrimary: () async throws -> T,
                                   _ body: @escaping @Sendable (EngineConnection) async throws -> T) async throws -> T {
        let waitEnds = ContinuousClock.now + wait
        var pause: Duration = .milliseconds(1)
        while true {
            let decision = routing.withLockedValue { $0.decide(after: position, now: .now) }
            let replica: Int
            let asks: Bool
            switch decision {
            case .primary: return try await primary(onPrimary)
            case .replica(let index): (replica, asks) = (index, false)
            case .ask(let index): (replica, asks) = (index, true)
            }
            let outcome: Outcome<T>
            do {
                outcome = try await pools[replica].withConnection(scope: scope, deadline: deadline, budget: budget, operation: operation) { [self] connection in
                    if asks, let position {
                        guard let replayed = try await replayPosition(on: connection) else { return .notStandby }
                        routing.withLockedValue { $0.recordReplayed(replayed, replica: replica) }
                        guard replayed >= position else { return .behind }
                    }
                    return .served(try await body(connection))
                }
            } catch let error as PGModelError where Self.isStandbyFailure(error) {
                logger.warning("a read replica failed; its reads go to the primary for a while",
                               metadata: ["replica": "\(replica)", "error": "\(error.code.rawValue)"])
                routing.withLockedValue { $0.markDown(replica, until: .now + Self.downTime) }
                continue
            } catch let error as PGModelError where Self.isRecoveryConflict(error) || Self.isSchemaLag(error) {
                // The standby cancelled the read to replay what the primary did meanwhile, or has not yet
                // replayed a table or column someone else's migration made: the primary has both.
                return try await primary(onPrimary)
            }
            switch outcome {
            case .served(let value):
                counts.withLockedValue { $0.replica += 1 }
                metrics.cache.counter(Self.readsTotal, ("served_by", "replica")).increment()
                return value
            case .notStandby:
                logger.warning("a read replica is not a standby (pg_last_wal_replay_lsn() is null); it serves no reads for a while",
                               metadata: ["replica": "\(replica)"])
                routing.withLockedValue { $0.markDown(replica, until: .now + Self.downTime) }
            case .behind:
                // The standby gets the whole wait: the last pause ends at the bound, and it is asked once
                // more there before the read goes to the primary.
                let now = ContinuousClock.now
                guard now < waitEnds else { return try await primary(onPrimary) }
                try await Task.sleep(until: min(now + pause, waitEnds))
                pause = min(pause * 2, .milliseconds(16))
            }
        }
    }

    /// Closes every standby's pool.
    package func close() async {
        for pool in pools { await pool.close() }
    }

    private func primary<T>(_ onPrimary: () async throws -> T) async throws -> T {
        counts.withLockedValue { $0.primary += 1 }
        metrics.cache.counter(Self.readsTotal, ("served_by", "primary")).increment()
        return try await onPrimary()
    }

    /// How far the standby has replayed; `nil` from a server that is not in recovery.
    private func replayPosition(on connection: EngineConnection) async throws -> LogSequenceNumber? {
        let rows = try await connection.connection.query("SELECT pg_last_wal_replay_lsn()::text", logger: logger).collect()
        return try rows.first?.decode(String?.self).flatMap(LogSequenceNumber.init)
    }

    /// Whether `error` says the standby itself is unusable now (rather than the read being wrong): it
    /// cannot be reached, is shutting down or starting, is out of connections or resources.
    static func isStandbyFailure(_ error: PGModelError) -> Bool {
        if error.code == .connectionFailed { return true }
        guard let state = error.sqlState else { return false }
        // 57014 is a statement timeout: the read's own cost, which the primary would pay as well.
        if state == "57014" { return false }
        return state.hasPrefix("08") || state.hasPrefix("57") || state.hasPrefix("53") || state == "25006"
    }

    /// Whether `error` is a standby cancelling a read that conflicted with replay.
    static func isRecoveryConflict(_ error: PGModelError) -> Bool {
        error.sqlState == "40001" || error.sqlState == "40P01"
    }

    /// Whether `error` names a table, column or function the standby lacks: schema work on the primary
    /// that it has not replayed yet.
    static func isSchemaLag(_ error: PGModelError) -> Bool {
        error.sqlState == "42P01" || error.sqlState == "42703" || error.sqlState == "42883"
    }

    private enum Outcome<Value: Sendable>: Sendable {
        case served(Value)
        case behind
        case notStandby
    }
}
