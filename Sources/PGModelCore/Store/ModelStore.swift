
/// What a `ModelContainer` talks to: the direct PostgreSQL store or the line-protocol service.
/// Both speak the same Query IR, so `ModelContext` code is identical for both.
///
/// Implementations are Sendable and async; `ModelContext` bridges them to SwiftData's synchronous API
/// with ``BlockingBridge``.
@_spi(PGModelInternals) public protocol ModelStore: Sendable {
    /// Makes the store ready for `schema`: creates or extends tables (direct store) or registers the
    /// schema with the service (remote store).
    func prepare(_ schema: SchemaDescription) async throws
    /// Rows matching `request`, in its order.
    func fetch(_ request: FetchRequest) async throws -> [FetchedRow]
    /// Rows matching `request`, in its order, positionally: each class's value names once, then per row
    /// only its values. What `ModelContext` builds models from. A store that does not implement it gets
    /// one built from ``fetch(_:)``.
    func fetchTable(_ request: FetchRequest) async throws -> FetchedTable
    /// The number of rows matching `request` (limit and offset applied).
    func count(_ request: FetchRequest) async throws -> Int
    /// The ids of rows matching `request`, in its order.
    func fetchIdentifiers(_ request: FetchRequest) async throws -> [RowReference]
    /// Applies `request` in one transaction: all or nothing.
    func save(_ request: SaveRequest) async throws -> SaveResult
    /// History transactions matching `request`, in token (commit) order (see ``HistoryRequest``).
    /// Throws `historyTokenExpired` when the filter resumes from a token older than deleted history.
    func fetchHistory(_ request: HistoryRequest) async throws -> HistoryPage
    /// Deletes the history transactions matching `request` (and their changes); returns how many.
    func deleteHistory(_ request: HistoryRequest) async throws -> Int
    /// The owner of `record` and the shares of it the caller may see (``SaveRequest/shares`` changes
    /// them). `notFound` when the record is not visible.
    func sharing(of record: RowReference) async throws -> RecordSharing
    /// The doorbell: a new stream of ``ChangeSignal``s for each call, until the store closes. The store
    /// reconnects by itself after a drop and then yields ``ChangeSignal/Kind/reconnected``.
    func changeSignals() -> AsyncStream<ChangeSignal>
    /// Releases connections. Later calls throw `connectionFailed`.
    func close() async
}
