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
/// A save's last few statements may also be sent ahead without waiting for anything
/// (``sendAhead(_:_:on:model:)``): the transaction then awaits them together with its COMMIT, once
/// (``takeOutstanding()``).
///
/// The statement in flight is PostgresNIO's future for it, not a Swift task: the query is written to the
/// connection's channel at once, and nothing waits for a thread of Swift's cooperative pool, which a
/// process full of blocking SwiftData calls may have none of to spare (a task there once left saves
/// "idle in transaction" until their deadline).
struct StatementPipeline {
    /// A statement sent and not yet awaited.
    struct Outstanding {
        let result: EventLoopFuture<PostgresQueryResult>
        let watch: StatementWatch?
        let model: String?

        /// Waits for the statement and rethrows its error.
        func finish() async throws {
            try await PostgresStoreEngine.finish(result, watch: watch, model: model)
        }
    }

    /// Sent, not yet awaited, oldest first: the statement in flight of ``send(_:_:on:model:)``, then those
    /// sent ahead behind it.
    private var outstanding: [Outstanding] = []

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
        outstanding = [Outstanding(result: started, watch: connection.watch, model: model)]
    }

    /// Starts `statement` behind those outstanding without waiting for any of them. It stays outstanding
    /// until ``drain()`` or until the transaction takes it (``takeOutstanding()``) to await with its COMMIT.
    mutating func sendAhead(_ statement: SQLStatement, _ engine: PostgresStoreEngine, on connection: EngineConnection,
                            model: String? = nil) throws {
        outstanding.append(Outstanding(result: try engine.start(statement, on: connection, model: model), watch: connection.watch, model: model))
    }

    /// Waits for every outstanding statement, oldest first, and rethrows the first error.
    mutating func drain() async throws {
        let waiting = outstanding
        outstanding = []
        try await Self.finish(waiting)
    }

    /// The outstanding statements, handed to whoever awaits them (the transaction, after its COMMIT);
    /// the pipeline then holds none.
    mutating func takeOutstanding() -> [Outstanding] {
        defer { outstanding = [] }
        return outstanding
    }

    /// Waits for `statements`, oldest first, and rethrows the first error: a later statement of the same
    /// transaction would only fail with "current transaction is aborted". Each waits for the whole list
    /// so that none is left running unawaited.
    static func finish(_ statements: [Outstanding]) async throws {
        var first: (any Error)?
        for statement in statements {
            do {
                try await statement.finish()
            } catch {
                if first == nil { first = error }
            }
        }
        if let first { throw first }
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
