import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO

/// The direct store: the app's own connections to PostgreSQL, as the trusted whole-database view
/// (``Requester/trusted``), through the same ``DatabaseGateway`` the server uses.
///
/// ```swift
/// let store = PostgresModelStore(configuration: try PostgresStoreConfiguration.parse(url), eventLoop: loop)
/// ```
@_spi(PGModelInternals) public final class PostgresModelStore: ModelStore {
    package let gateway: DatabaseGateway
    /// Drop the schema on close: the store of an `isStoredInMemoryOnly` configuration.
    let dropsSchemaOnClose: Bool
    /// The doorbell's one LISTEN connection, opened when the first observer starts.
    let changeListener: ChangeListener
    /// Connections a direct store opens at most; further calls wait for one within their deadline.
    public static let defaultMaximumConnections = 10
    /// The PostgreSQL schema the store's tables live in: what history and `PersistentIdentifier`s
    /// name the store by.
    public let schemaName: String
    /// Calls by operation and outcome, their durations, conflicts (``StoreMetrics``).
    let metrics: StoreMetrics
    /// The newest commit position of this store's saves and schema work: with read replicas, a read goes
    /// to a standby only once it has replayed this far, so the app always reads its own writes.
    private let lastCommit = NIOLockedValueBox<LogSequenceNumber?>(nil)

    /// The position reads wait for on a standby (``lastCommit``); `nil` before the first save.
    ///
    /// ```swift
    /// let position = store.readAfter
    /// ```
    package var readAfter: LogSequenceNumber? { lastCommit.withLockedValue { $0 } }

    /// Counts of reads served by a standby and by the primary, when read replicas are configured.
    ///
    /// ```swift
    /// let served = store.replicaReads?.replica ?? 0
    /// ```
    package var replicaReads: (replica: Int, primary: Int)? { gateway.replicas?.servedReads }

    private func remember(_ position: LogSequenceNumber?) {
        guard let position else { return }
        lastCommit.withLockedValue { $0 = LogSequenceNumber.latest($0, position) }
    }

    /// With read replicas, the primary's WAL position after schema work: later reads wait for a standby
    /// to have the tables it made.
    private func rememberPrimaryPosition() async throws {
        guard gateway.replicas != nil else { return }
        remember(try await gateway.currentWALPosition())
    }

    public init(configuration: PostgresStoreConfiguration, eventLoop: any EventLoop, dropsSchemaOnClose: Bool = false,
                requestTimeout: TimeAmount = .seconds(30), maximumConnections: Int = PostgresModelStore.defaultMaximumConnections,
                logger: Logger = Logger(label: "pgmodel.store")) {
        var configuration = configuration
        configuration.connectTimeout = min(configuration.connectTimeout, requestTimeout)
        self.gateway = DatabaseGateway(configuration: configuration, maximumConnections: maximumConnections,
                                       requestTimeout: requestTimeout, eventLoopGroup: eventLoop, logger: logger)
        self.metrics = StoreMetrics(configuration: configuration)
        self.dropsSchemaOnClose = dropsSchemaOnClose
        self.schemaName = configuration.schemaName
        self.changeListener = ChangeListener(configuration: configuration.sessionConfiguration.connection, schemaName: configuration.schemaName,
                                             eventLoop: eventLoop, logger: logger)
    }

    public func prepare(_ schema: SchemaDescription) async throws {
        try await measured("prepare") {
            _ = try await gateway.prepare(schema, as: .trusted)
            try await rememberPrimaryPosition()
        }
    }

    public func fetch(_ request: FetchRequest) async throws -> [FetchedRow] {
        try await measured("fetch") { try await gateway.fetch(request, as: .trusted, readAfter: readAfter) }
    }

    public func fetchTable(_ request: FetchRequest) async throws -> FetchedTable {
        try await measured("fetch_table") { try await gateway.fetchTable(request, as: .trusted, readAfter: readAfter) }
    }

    public func count(_ request: FetchRequest) async throws -> Int {
        try await measured("count") { try await gateway.count(request, as: .trusted, readAfter: readAfter) }
    }

    public func fetchIdentifiers(_ request: FetchRequest) async throws -> [RowReference] {
        try await measured("ids") { try await gateway.fetchIdentifiers(request, as: .trusted, readAfter: readAfter) }
    }

    public func save(_ request: SaveRequest) async throws -> SaveResult {
        try await measured("save") {
            let result = try await gateway.save(request, as: .trusted)
            remember(result.commitLSN)
            return result
        }
    }

    public func fetchHistory(_ request: HistoryRequest) async throws -> HistoryPage {
        try await measured("history") { try await gateway.fetchHistory(request, as: .trusted, readAfter: readAfter, onStandby: true) }
    }

    public func deleteHistory(_ request: HistoryRequest) async throws -> Int {
        try await measured("delete_history") {
            let deleted = try await gateway.deleteHistory(request, as: .trusted)
            // Later history reads on a standby wait for the deletion, as for a save.
            if deleted > 0 { try await rememberPrimaryPosition() }
            return deleted
        }
    }

    public func sharing(of record: RowReference) async throws -> RecordSharing {
        try await measured("shares") { try await gateway.sharing(of: record, as: .trusted) }
    }

    public func changeSignals() -> AsyncStream<ChangeSignal> {
        changeListener.signals()
    }

    public func close() async {
        // Idempotent: `ModelContainer.close()` and the container's deinit both call it.
        guard closing.withLockedValue({ let was = $0; $0 = true; return !was }) else { return }
        await changeListener.close()
        // A temporary schema is dropped even when no connection is idle: otherwise it would outlive the container.
        if dropsSchemaOnClose { try? await gateway.dropSchema() }
        await gateway.close()
    }

    private let closing = NIOLockedValueBox(false)

    /// Runs one store call, counted by operation and outcome and timed.
    private func measured<T>(_ operation: String, _ body: () async throws -> T) async throws -> T {
        let started = ContinuousClock.now
        do {
            let result = try await body()
            metrics.recordCall(operation, since: started, error: nil)
            return result
        } catch {
            metrics.recordCall(operation, since: started, error: error)
            throw error
        }
    }
}
