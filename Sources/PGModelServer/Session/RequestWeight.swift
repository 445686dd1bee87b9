import NIOCore
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelWire

/// Which of a connection's work may run on its event loop and which must leave it.
///
/// A connection's short requests run on the event loop its bytes arrive on
/// (``LineServerConfiguration/runsShortRequestsOnEventLoop``): a point fetch or a one-model save then
/// wakes no other thread between the socket, the pooled database connection (the pool prefers one on
/// the same loop) and the answer — each wake-up of a parked thread costs tens of microseconds on a
/// loaded machine, and a request on Swift's global executor needs four more of them than one on the loop. But
/// an event loop also carries other connections' I/O and timers, so work whose CPU time grows with the
/// request — decoding a long line, a save of many rows, decoding or encoding a large result, schema
/// changes, history, logins (bcrypt) — runs on Swift's global executor, where it delays nobody's I/O.
///
/// ```swift
/// let response = await RequestWeight.run(heavy: RequestWeight.isHeavy(request.operation)) {
///     await dispatcher.execute(request, as: user)
/// }
/// ```
package enum RequestWeight {
    /// Lines longer than this are decoded off the event loop.
    package static let lightLineBytes = 16 * 1024
    /// Saves with more changes than this run off the event loop.
    package static let lightSaveChanges = 64
    /// Answers with more rows (or ids, or shares) than this are encoded off the event loop, and fetched
    /// results with more rows are decoded off it.
    package static let lightAnswerRows = 256

    /// Runs `body` where its weight belongs: on the current executor when light, on the global
    /// concurrent executor when heavy.
    package static func run<T>(heavy: Bool, _ body: () async throws -> T) async rethrows -> T {
        guard heavy else { return try await body() }
        return try await withTaskExecutorPreference(globalConcurrentExecutor, operation: body)
    }

    /// Whether a request line is long enough to decode off the event loop.
    package static func isHeavy(line: ByteBuffer) -> Bool { line.readableBytes > lightLineBytes }

    /// Whether performing `operation` should leave the event loop. Fetches stay on it: what a fetch
    /// costs is only known from its rows, whose decoding (``PostgresStoreEngine``'s large-result
    /// executor) and encoding (``isHeavy(_:)-(Response)``) leave the loop when there are many.
    package static func isHeavy(_ operation: Request.Operation) -> Bool {
        switch operation {
        case .register, .migrate, .deleteHistory, .history, .hello:
            return true
        case .save(let request):
            let changes = request.inserts.count + request.updates.count + request.deletes.count
                + request.links.count + request.shares.count
            return changes > lightSaveChanges || !request.batchDeletes.isEmpty
        case .fetch, .fetchTable, .count, .ids, .share, .unshare, .shares, .ping, .bye, .subscribe, .unsubscribe:
            return false
        }
    }

    /// Whether encoding `response` should leave the event loop.
    package static func isHeavy(_ response: Response) -> Bool {
        guard case .success(let result) = response.result else { return false }
        switch result {
        case .rows(let rows): return rows.count > lightAnswerRows
        case .table(let table): return table.rows.count > lightAnswerRows
        case .ids(let ids): return ids.count > lightAnswerRows
        case .history(let page): return page.transactions.count > lightAnswerRows / 8
        case .shares(let sharing): return sharing.shares.count > lightAnswerRows
        case .saved(let result):
            return result.remappedIdentifiers.count + result.deleted.count + result.merged.count + result.stored.rows.count > lightAnswerRows
        case .hello, .pong, .registered, .count, .acknowledged, .subscribed, .held:
            return false
        }
    }
}
