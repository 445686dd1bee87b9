@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO

/// A save's statements sent ahead while the caller builds the next one: in a large save,
/// building and encoding a chunk's arrays (client work) overlaps PostgreSQL's work on the previous chunk,
/// where one after the other they added up. At most two are outstanding — one running, the next queued
/// behind it — and the caller waits for the older before building more. Statements still run one at a
/// time in the order they are sent, and the first failure is the one rethrown (a later statement would
/// only fail with "current transaction is aborted"). Only for statements whose rows nobody reads.
///
/// ```swift
/// var pipeline = StatementPipeline()
/// for chunk in chunks { try await pipeline.send(build(chunk), engine, on: connection) }
/// try await pipeline.drain()   // before any other statement, and before the transaction ends
/// ```
///
/// The statement in flight is PostgresNIO's future for it, not a Swift task: the query is written to the
/// connection's channel at once, and nothing waits for a thread of Swift's cooperative pool, which a
/// process full of blocking SwiftData calls may have none of to spare (a task there once left saves
/// "idle in transaction" until their deadline).
struct StatementPipeline {
    private var inFlight: (result: EventLoopFuture<PostgresQueryResult>, watch: StatementWatch?, model: String?)?

    /// Starts `statement` — its binds encoded and the query queued behind the one in flight — then waits
    /// for the statement in flight (rethrowing its error). PostgresNIO sends a connection's queries one
    /// after another, so `statement` reaches PostgreSQL the moment the one before it completes, instead of
    /// after this task has woken up and encoded it (a bulk save's chunks would each leave the server idle).
    /// Should the earlier statement fail, this one fails too, with "current transaction is aborted",
    /// and only the earlier error is reported.
    mutating func send(_ statement: SQLStatement, _ engine: PostgresStoreEngine, on connection: EngineConnection,
                       model: String? = nil) async throws {
        let started: EventLoopFuture<PostgresQueryResult>
        do {
            started = try engine.start(statement, on: connection, model: model)
        } catch {
            // Nothing was sent (its binds could not be encoded): the earlier statement's error comes first.
            try await drain()
            throw error
        }
        try await drain()
        inFlight = (started, connection.watch, model)
    }

    /// Waits for the statement in flight, if any, and rethrows its error.
    mutating func drain() async throws {
        guard let (result, watch, model) = inFlight else { return }
        inFlight = nil
        try await PostgresStoreEngine.finish(result, watch: watch, model: model)
    }

    /// After `error` ended the caller's work: waits for the statement in flight and returns the error to
    /// report, the statement's own when it failed (it was sent before whatever failed after it).
    mutating func settle(after error: any Error) async -> any Error {
        do {
            try await drain()
            return error
        } catch let earlier {
            return earlier
        }
    }
}
