import Foundation
import NIOConcurrencyHelpers
import Observation
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres

/// Counts the history transactions committed anywhere — this process, other processes, other users of
/// the service — that match its authors and models. `Observable`: watch ``eventCounter`` and call
/// `fetchHistory` from your own token when it moves.
///
/// ``eventCounter`` grows by one per matching transaction, exactly once each, in commit visibility
/// order, also across reconnects (the observer resumes from its token).
///
/// ```swift
/// let observer = try HistoryObserver(authors: ["App"], modelContainer: container)
/// token = withContinuousObservation(options: .didSet) { [weak self] _ in
///     _ = observer.eventCounter
///     self?.processChanges()
/// }
/// ```
public final class HistoryObserver: Observable, @unchecked Sendable {
    // @unchecked: all mutable state is behind `lock`; the registrar is thread-safe.
    /// The container whose store this observer watches.
    public let modelContainer: ModelContainer
    /// Only transactions with a change of one of these classes (or their subclasses) count; empty: all.
    public let observedModels: [any PersistentModel.Type]
    /// Only transactions by one of these authors count; empty: all.
    public let authors: Set<String>
    private let observedEntities: Set<String>
    private let lock = NIOLock()
    private var counter = 0
    private var tokens: [String: DefaultHistoryToken] = [:]
    private let registrar = ObservationRegistrar()
    /// Odd while ``receive(_:)`` changes the tokens and the counter (``ObservationReadLog``).
    private let epoch = MutationEpoch()
    private var subscription: Int?

    /// Increments once per matching transaction.
    public var eventCounter: Int {
        registrar.access(self, keyPath: \.eventCounter)
        ObservationReadLog.current?.record(epoch)
        return lock.withLock { counter }
    }

    /// The token of the last matching transaction counted, keyed by store identifier.
    public var historyTokens: [String: any HistoryToken] {
        registrar.access(self, keyPath: \.historyTokens)
        ObservationReadLog.current?.record(epoch)
        return lock.withLock { tokens }
    }

    /// Starts observing. With `historyTokens` (keyed by store identifier, as ``historyTokens``
    /// returns them) the observer first counts what matched after that token; without, it counts
    /// only transactions committed from now on.
    ///
    /// ```swift
    /// let observer = try HistoryObserver(observedModels: [Trip.self], modelContainer: container)
    /// ```
    public init(historyTokens: [String: any HistoryToken]? = nil, observedModels: [any PersistentModel.Type] = [],
                authors: Set<String> = [], modelContainer: ModelContainer, isolation: isolated (any Actor)? = #isolation) throws {
        self.modelContainer = modelContainer
        self.observedModels = observedModels
        self.authors = authors
        let schema = modelContainer.schema.schemaDescription
        var entities: Set<String> = []
        for type in observedModels {
            for name in schema.entityNames(inHierarchyOf: type._$entityName) { entities.insert(name) }
            entities.insert(type._$entityName)
        }
        self.observedEntities = entities
        let start = historyTokens?.values.compactMap { ($0 as? DefaultHistoryToken)?.value }.max()
        let feed = modelContainer.historyFeed
        let receiver = HistoryObserverReceiver(self)
        subscription = try modelContainer.bridge.run {
            try await feed.register(after: start) { records in receiver.receive(records) }
        }
    }

    deinit {
        if let subscription { modelContainer.historyFeed.unregister(subscription) }
    }

    fileprivate func receive(_ records: [HistoryRecord]) {
        let matching = records.filter(matches)
        guard let last = matching.last else { return }
        epoch.change {
            registrar.withMutation(of: self, keyPath: \.historyTokens) {
                lock.withLock { tokens[last.storeIdentifier] = DefaultHistoryToken(value: last.token, storeIdentifier: last.storeIdentifier) }
            }
            registrar.withMutation(of: self, keyPath: \.eventCounter) {
                lock.withLock { counter += matching.count }
            }
        }
    }

    private func matches(_ record: HistoryRecord) -> Bool {
        if !authors.isEmpty {
            guard let author = record.author, authors.contains(author) else { return false }
        }
        if !observedEntities.isEmpty {
            return record.changes.contains { observedEntities.contains($0.entity) }
        }
        return true
    }
}

/// Lets the feed reach the observer without keeping it alive.
private final class HistoryObserverReceiver: Sendable {
    private weak let observer: HistoryObserver?

    init(_ observer: HistoryObserver) { self.observer = observer }

    func receive(_ records: [HistoryRecord]) { observer?.receive(records) }
}
