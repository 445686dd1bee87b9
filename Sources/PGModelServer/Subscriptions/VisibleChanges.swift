import Foundation
import Logging
import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelWire

/// Change events as one user may see them. The doorbell rings for every save in the store; before a
/// connection is told, this reads the history committed since it was last told, as that user (row-level
/// security decides which changes they see), and turns the ring into an event naming the classes of
/// the visible changes — or into nothing, when none is visible. So a user learns of another's save only
/// when it touched a record shared with them.
///
/// ```swift
/// let visible = VisibleChanges(gateway: gateway, requester: .user(alice), reads: ServerCounter(), logger: logger)
/// await visible.start()
/// if let signal = await visible.filter(ring) { forward(signal) }
/// ```
final class VisibleChanges: Sendable {
    private let gateway: DatabaseGateway
    private let requester: Requester
    private let reads: ServerCounter
    private let logger: Logger
    /// Records how far behind the newest history each read is (``ServerMetrics``); nil records nothing.
    private let metrics: ServerMetrics?
    /// The newest history token this connection was told about; nil until ``start()`` read it.
    private let told = NIOLockedValueBox<UInt64?>(nil)
    private static let pageSize = 500
    /// The most transactions and changes an event carries: a longer page stays on the server, and its
    /// client reads it in pages of its own rather than receive one long line it did not ask for.
    static let maxEventTransactions = 100
    static let maxEventChanges = 1_000

    init(gateway: DatabaseGateway, requester: Requester, reads: ServerCounter, logger: Logger, metrics: ServerMetrics? = nil) {
        self.metrics = metrics
        self.gateway = gateway
        self.requester = requester
        self.reads = reads
        self.logger = logger
    }

    /// Reads the newest visible token, before the subscription's response goes out: what commits later
    /// is what the connection will hear of.
    func start() async {
        guard told.withLockedValue({ $0 }) == nil else { return }
        let newest = try? await gateway.fetchHistory(HistoryRequest(newestFirst: true, limit: 1), as: requester)
        told.withLockedValue { $0 = $0 ?? newest?.transactions.first?.token ?? 0 }
    }

    /// `signal` as this user may see it; nil when the saves it announces changed nothing they see.
    /// When the history since then is more than one read (a page of 500 transactions) or cannot be read
    /// (a database error), the event names no class: the client then reads its history itself, which shows only what it may see.
    func filter(_ signal: ChangeSignal) async -> ChangeSignal? {
        guard signal.kind == .committed, let after = told.withLockedValue({ $0 }) else { return signal }
        reads.add(1)
        do {
            let page = try await gateway.fetchHistory(HistoryRequest(filter: .token(.greater, after), limit: Self.pageSize), as: requester)
            metrics?.recordHistoryRead(oldestCommitted: page.transactions.first?.timestamp)
            if let last = page.transactions.last?.token {
                told.withLockedValue { $0 = max($0 ?? 0, last) }
            }
            if page.transactions.count == Self.pageSize { return ChangeSignal(.committed) }
            let entities = Set(page.transactions.flatMap { $0.changes.map(\.entity) })
            guard !entities.isEmpty else { return nil }
            let changes = page.transactions.reduce(0) { $0 + $1.changes.count }
            let carried = page.transactions.count <= Self.maxEventTransactions && changes <= Self.maxEventChanges
            return ChangeSignal(.committed, entities: entities.sorted(),
                                history: carried ? ChangeSignal.VisibleHistory(after: after, transactions: page.transactions) : nil)
        } catch {
            logger.debug("reading history for a change event failed", metadata: ["error": "\(LogText("\(error)"))"])
            return ChangeSignal(.committed)
        }
    }
}
