import Foundation
import NIOConcurrencyHelpers
import Observation
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres

/// The name the Japanese edition of "What's new in SwiftData" uses for an unsectioned ``ResultsObserver``:
/// `ModelResultsObserver<Trip>` is `ResultsObserver<Trip, Never>`.
///
/// ```swift
/// let observer = try ModelResultsObserver<Trip>(modelContext: context)
/// token = withContinuousObservation(options: [.didSet]) { _ in print(observer.results.count) }
/// ```
public typealias ModelResultsObserver<Element: PersistentModel> = ResultsObserver<Element, Never>

/// Fetches models and keeps the results current as saves commit — in this context, other contexts,
/// other processes on the same database and other users of the service (as far as the observing user
/// may see them). `Observable`: read ``results`` or ``sections`` inside `withObservationTracking` or
/// ``withContinuousObservation(options:isolation:apply:)`` to be told when they change.
///
/// The observer re-queries only when a committed change touches an entity its fetch depends on (the
/// fetched class hierarchy and every entity its predicate or sort reaches through relationships). The
/// re-query runs lazily, in ``modelContext``, the next time ``results`` or ``sections`` is read — so it
/// runs on whatever actor owns that context.
///
/// ```swift
/// let observer = try ResultsObserver<Trip, Never>(modelContext: context)
/// let byGenre = try ResultsObserver<Book, String>(sectionBy: \.genre, modelContext: context)
/// token = withContinuousObservation { _ in print(observer.results.count) }
/// ```
public final class ResultsObserver<Element: PersistentModel, SectionTitle: Hashable>: Observable {
    /// The context the observer fetches in; its models are the ones in ``results``.
    public let modelContext: ModelContext
    private let sectionTitle: ((Element) -> SectionTitle)?
    private let sectionSort: SortDescriptor<Element>?
    private let sectionKeyPath: AnyKeyPath?
    private var descriptor: FetchDescriptor<Element>
    private var storedResults = FetchResultsCollection<Element>(loaded: [], identifiers: [], entityName: "")
    private var storedSections: SectionedResults<Element, SectionTitle>?
    let invalidation: ResultsInvalidation
    let registrar = ObservationRegistrar()
    private(set) var storedModels: [Element] = []
    private var subscription: Int?

    /// The latest error of a re-query (the previous results are kept, and the next read tries again); nil
    /// after a successful one.
    public private(set) var lastError: (any Error)?

    /// The filter; setting it re-queries on the next read.
    public var filterBy: Predicate<Element>? {
        get { descriptor.predicate }
        set { descriptor.predicate = newValue; try? updateDependencies(); invalidateFromHere() }
    }

    /// The sort order (the section key, when sectioned, stays the first sort); setting it re-queries on the next read.
    public var sortBy: [SortDescriptor<Element>] {
        get { descriptor.sortBy }
        set { descriptor.sortBy = newValue; try? updateDependencies(); invalidateFromHere() }
    }

    /// The current results, in sort order: a random-access collection of models, all loaded.
    ///
    /// ```swift
    /// for trip in observer.results { print(trip.name) }
    /// let names = observer.results.map(\.name)
    /// ```
    public var results: FetchResultsCollection<Element> {
        trackResultsRead()
        return storedResults
    }

    /// What every read of the results does first: registers it for observation and re-queries if stale.
    func trackResultsRead() {
        registrar.access(self, keyPath: \.results)
        ObservationReadLog.current?.record(invalidation.epoch)
        refreshIfStale()
    }

    /// The fetch the observer runs: its filter and sort (the section key first, when sectioned),
    /// limit, offset and prefetching.
    ///
    /// ```swift
    /// print(observer.fetchDescriptor.sortBy.count)
    /// ```
    public var fetchDescriptor: FetchDescriptor<Element> { effectiveDescriptor }

    /// The key path the results are sectioned by; nil for an unsectioned observer.
    ///
    /// ```swift
    /// if observer.sectionBy == \Book.genre { … }
    /// ```
    public var sectionBy: PartialKeyPath<Element>? { sectionKeyPath as? PartialKeyPath<Element> }

    /// The results grouped by the `sectionBy` key path, in order of first appearance; nil when the
    /// observer is not sectioned (`SectionTitle == Never`).
    public var sections: SectionedResults<Element, SectionTitle>? {
        registrar.access(self, keyPath: \.sections)
        ObservationReadLog.current?.record(invalidation.epoch)
        refreshIfStale()
        return storedSections
    }

    init(descriptor: FetchDescriptor<Element>, sectionTitle: ((Element) -> SectionTitle)?, sectionSort: SortDescriptor<Element>?,
         sectionKeyPath: AnyKeyPath?, modelContext: ModelContext) throws {
        self.modelContext = modelContext
        self.descriptor = descriptor
        self.sectionTitle = sectionTitle
        self.sectionSort = sectionSort
        self.sectionKeyPath = sectionKeyPath
        self.invalidation = ResultsInvalidation(schema: modelContext.container.schema.schemaDescription)
        try updateDependencies()
        invalidation.attach(self)
        modelContext.observerInvalidations.append(WeakInvalidation(invalidation))
        // Registered before the first fetch, so a save committed after that fetch is always delivered.
        let feed = modelContext.container.historyFeed
        let invalidation = invalidation
        subscription = try modelContext.container.bridge.run {
            try await feed.register { records in invalidation.receive(records) }
        }
        try refresh()
    }

    deinit {
        if let subscription { modelContext.container.historyFeed.unregister(subscription) }
    }

    private var effectiveDescriptor: FetchDescriptor<Element> {
        var effective = descriptor
        if let sectionSort, let sectionKeyPath {
            effective.sortBy = ModelContext.sectionSort(sectionSort, descriptor.sortBy, sectionKeyPath)
        }
        return effective
    }

    private func updateDependencies() throws {
        let (_, request, _) = try modelContext.prepare(effectiveDescriptor)
        invalidation.dependencies = modelContext.container.schema.schemaDescription.dependencies(of: request)
    }

    func refreshIfStale() {
        guard invalidation.takeStale() else { return }
        do {
            try refresh()
        } catch {
            lastError = error
            // The results are still stale: the next read tries again rather than showing them as current.
            invalidation.markStale()
        }
    }

    private func refresh() throws {
        let models = try modelContext.fetch(effectiveDescriptor)
        storedModels = models
        storedResults = FetchResultsCollection(loaded: models, identifiers: models.map(\.persistentModelID),
                                               entityName: Element._$entityName)
        storedSections = sectionTitle.map { SectionedResults(models, title: $0) }
        lastError = nil
    }

    /// How many times committed changes (or a new filter or sort) invalidated the results.
    var invalidationCount: Int { invalidation.count }

    private func invalidateFromHere() {
        invalidation.invalidate()
    }

    /// Tells observation tracking that ``results`` and ``sections`` changed; called from the feed.
    fileprivate func announceChange() {
        registrar.withMutation(of: self, keyPath: \.results) {}
        registrar.withMutation(of: self, keyPath: \.sections) {}
    }
}

extension ResultsObserver where SectionTitle == Never {
    /// An unsectioned observer of the models matching `filterBy`, sorted by `sortBy`.
    ///
    /// ```swift
    /// let observer = try ResultsObserver<Trip, Never>(filterBy: #Predicate { $0.destination == "Paris" }, modelContext: context)
    /// ```
    public convenience init(filterBy: Predicate<Element>? = nil, sortBy: [SortDescriptor<Element>]? = nil,
                            modelContext: ModelContext, isolation: isolated (any Actor)? = #isolation) throws {
        try self.init(descriptor: FetchDescriptor(predicate: filterBy, sortBy: sortBy ?? []), sectionTitle: nil,
                      sectionSort: nil, sectionKeyPath: nil, modelContext: modelContext)
    }

    /// An unsectioned observer in a new context of `modelContainer`.
    ///
    /// ```swift
    /// let observer = try ResultsObserver<Trip, Never>(modelContainer: container)
    /// ```
    public convenience init(filterBy: Predicate<Element>? = nil, sortBy: [SortDescriptor<Element>]? = nil,
                            modelContainer: ModelContainer, isolation: isolated (any Actor)? = #isolation) throws {
        try self.init(filterBy: filterBy, sortBy: sortBy, modelContext: ModelContext(modelContainer))
    }

    /// An unsectioned observer of `fetchDescriptor` (its limit, offset and prefetching included).
    ///
    /// ```swift
    /// let observer = try ResultsObserver<Trip, Never>(fetchDescriptor: FetchDescriptor(sortBy: [SortDescriptor(\.startDate)]), modelContext: context)
    /// ```
    public convenience init(fetchDescriptor: FetchDescriptor<Element> = FetchDescriptor<Element>(), modelContext: ModelContext,
                            isolation: isolated (any Actor)? = #isolation) throws {
        try self.init(descriptor: fetchDescriptor, sectionTitle: nil, sectionSort: nil, sectionKeyPath: nil, modelContext: modelContext)
    }

    /// An unsectioned observer of `fetchDescriptor` in a new context of `modelContainer`.
    ///
    /// ```swift
    /// let observer = try ResultsObserver<Trip, Never>(fetchDescriptor: FetchDescriptor(), modelContainer: container)
    /// ```
    public convenience init(fetchDescriptor: FetchDescriptor<Element> = FetchDescriptor<Element>(), modelContainer: ModelContainer,
                            isolation: isolated (any Actor)? = #isolation) throws {
        try self.init(fetchDescriptor: fetchDescriptor, modelContext: ModelContext(modelContainer))
    }
}

extension ResultsObserver where SectionTitle == String {
    /// A sectioned observer: sections by `sectionBy`, which becomes the first sort.
    ///
    /// ```swift
    /// let observer = try ResultsObserver<Book, String>(sectionBy: \.genre, modelContext: context)
    /// ```
    public convenience init(filterBy: Predicate<Element>? = nil, sortBy: [SortDescriptor<Element>]? = nil,
                            sectionBy: KeyPath<Element, String>, modelContext: ModelContext,
                            isolation: isolated (any Actor)? = #isolation) throws {
        try self.init(fetchDescriptor: FetchDescriptor(predicate: filterBy, sortBy: sortBy ?? []), sectionBy: sectionBy,
                      modelContext: modelContext)
    }

    /// A sectioned observer by an optional key; nil keys form the `""` section.
    ///
    /// ```swift
    /// let observer = try ResultsObserver<Trip, String>(sectionBy: \.city, modelContext: context)
    /// ```
    public convenience init(filterBy: Predicate<Element>? = nil, sortBy: [SortDescriptor<Element>]? = nil,
                            sectionBy: KeyPath<Element, String?>, modelContext: ModelContext,
                            isolation: isolated (any Actor)? = #isolation) throws {
        try self.init(fetchDescriptor: FetchDescriptor(predicate: filterBy, sortBy: sortBy ?? []), sectionBy: sectionBy,
                      modelContext: modelContext)
    }

    /// A sectioned observer in a new context of `modelContainer`.
    ///
    /// ```swift
    /// let observer = try ResultsObserver<Book, String>(sectionBy: \.genre, modelContainer: container)
    /// ```
    public convenience init(filterBy: Predicate<Element>? = nil, sortBy: [SortDescriptor<Element>]? = nil,
                            sectionBy: KeyPath<Element, String>, modelContainer: ModelContainer,
                            isolation: isolated (any Actor)? = #isolation) throws {
        try self.init(filterBy: filterBy, sortBy: sortBy, sectionBy: sectionBy, modelContext: ModelContext(modelContainer))
    }

    /// A sectioned observer by an optional key in a new context of `modelContainer`.
    ///
    /// ```swift
    /// let observer = try ResultsObserver<Trip, String>(sectionBy: \.city, modelContainer: container)
    /// ```
    public convenience init(filterBy: Predicate<Element>? = nil, sortBy: [SortDescriptor<Element>]? = nil,
                            sectionBy: KeyPath<Element, String?>, modelContainer: ModelContainer,
                            isolation: isolated (any Actor)? = #isolation) throws {
        try self.init(filterBy: filterBy, sortBy: sortBy, sectionBy: sectionBy, modelContext: ModelContext(modelContainer))
    }

    /// A sectioned observer of `fetchDescriptor`.
    ///
    /// ```swift
    /// let observer = try ResultsObserver<Trip, String>(fetchDescriptor: FetchDescriptor(), sectionBy: \.destination, modelContext: context)
    /// ```
    public convenience init(fetchDescriptor: FetchDescriptor<Element> = FetchDescriptor<Element>(), sectionBy: KeyPath<Element, String>,
                            modelContext: ModelContext, isolation: isolated (any Actor)? = #isolation) throws {
        try self.init(descriptor: fetchDescriptor, sectionTitle: { $0[keyPath: sectionBy] },
                      sectionSort: SortDescriptor(sortableKeyPath(sectionBy)), sectionKeyPath: sectionBy, modelContext: modelContext)
    }

    /// A sectioned observer of `fetchDescriptor` by an optional key; nil keys form the `""` section.
    ///
    /// ```swift
    /// let observer = try ResultsObserver<Trip, String>(fetchDescriptor: FetchDescriptor(), sectionBy: \.city, modelContext: context)
    /// ```
    public convenience init(fetchDescriptor: FetchDescriptor<Element> = FetchDescriptor<Element>(), sectionBy: KeyPath<Element, String?>,
                            modelContext: ModelContext, isolation: isolated (any Actor)? = #isolation) throws {
        try self.init(descriptor: fetchDescriptor, sectionTitle: { $0[keyPath: sectionBy] ?? "" },
                      sectionSort: SortDescriptor(sortableKeyPath(sectionBy)), sectionKeyPath: sectionBy, modelContext: modelContext)
    }

    /// A sectioned observer of `fetchDescriptor` in a new context of `modelContainer`.
    ///
    /// ```swift
    /// let observer = try ResultsObserver<Trip, String>(fetchDescriptor: FetchDescriptor(), sectionBy: \.destination, modelContainer: container)
    /// ```
    public convenience init(fetchDescriptor: FetchDescriptor<Element> = FetchDescriptor<Element>(), sectionBy: KeyPath<Element, String>,
                            modelContainer: ModelContainer, isolation: isolated (any Actor)? = #isolation) throws {
        try self.init(fetchDescriptor: fetchDescriptor, sectionBy: sectionBy, modelContext: ModelContext(modelContainer))
    }

    /// A sectioned observer of `fetchDescriptor` by an optional key in a new context of `modelContainer`.
    ///
    /// ```swift
    /// let observer = try ResultsObserver<Trip, String>(fetchDescriptor: FetchDescriptor(), sectionBy: \.city, modelContainer: container)
    /// ```
    public convenience init(fetchDescriptor: FetchDescriptor<Element> = FetchDescriptor<Element>(), sectionBy: KeyPath<Element, String?>,
                            modelContainer: ModelContainer, isolation: isolated (any Actor)? = #isolation) throws {
        try self.init(fetchDescriptor: fetchDescriptor, sectionBy: sectionBy, modelContext: ModelContext(modelContainer))
    }
}

/// The part of a ``ResultsObserver`` the history feed may touch from its own thread: which hierarchies
/// matter, whether the results are stale, and a weak way back to announce the change.
final class ResultsInvalidation: @unchecked Sendable {
    // @unchecked: every mutable field is behind `lock`; the observer is only used for identity with
    // its thread-safe ObservationRegistrar.
    private let lock = NIOLock()
    private let schema: SchemaDescription
    private var stale = false
    private var roots: Set<String> = []
    private var announce: (() -> Void)?
    /// Odd while an invalidation marks the results stale and announces it (``ObservationReadLog``).
    let epoch = MutationEpoch()

    init(schema: SchemaDescription) {
        self.schema = schema
    }

    var dependencies: Set<String> {
        get { lock.withLock { roots } }
        set { lock.withLock { roots = newValue } }
    }

    func attach<E, S>(_ observer: ResultsObserver<E, S>) {
        lock.withLock { announce = { [weak observer] in observer?.announceChange() } }
    }

    /// Marks the results stale when any change touches a dependency.
    func receive(_ records: [HistoryRecord]) {
        let roots = dependencies
        let relevant = records.contains { record in
            record.changes.contains { roots.contains(schema.rootEntity(of: $0.entity)?.name ?? $0.entity) }
        }
        if relevant { invalidate() }
    }

    /// Marks the results stale when a save of the observer's own context touched a dependency.
    func receive(entities: Set<String>) {
        let roots = dependencies
        if entities.contains(where: { roots.contains(schema.rootEntity(of: $0)?.name ?? $0) }) { invalidate() }
    }

    func invalidate() {
        epoch.change {
            let announce = lock.withLock { () -> (() -> Void)? in
                stale = true
                invalidations += 1
                return self.announce
            }
            announce?()
        }
    }

    /// How many times committed changes invalidated the results (tests assert that unrelated saves do not).
    var count: Int { lock.withLock { invalidations } }
    private var invalidations = 0

    /// Marks the results stale again without announcing it (a re-query that failed).
    func markStale() { lock.withLock { stale = true } }

    /// Whether a re-query is due; clears the flag.
    func takeStale() -> Bool {
        lock.withLock {
            defer { stale = false }
            return stale
        }
    }
}

/// A context's weak reference to one of its observers' invalidation state.
struct WeakInvalidation {
    weak var invalidation: ResultsInvalidation?

    init(_ invalidation: ResultsInvalidation) { self.invalidation = invalidation }
}

/// `sectionBy` as the key path `SortDescriptor` takes. Swift marks key path literals `Sendable` where
/// they are written, not when they are passed on as `KeyPath`; a key path to a model's stored property
/// captures nothing, so it is as sendable as the literal was.
private func sortableKeyPath<Root, Value>(_ keyPath: KeyPath<Root, Value>) -> any KeyPath<Root, Value> & Sendable {
    unsafeBitCast(keyPath, to: (any KeyPath<Root, Value> & Sendable).self)
}
