import Foundation

/// What to fetch: a predicate, a sort order, and paging.
///
/// ```swift
/// var descriptor = FetchDescriptor<Trip>(
///     predicate: #Predicate { $0.destination == "Paris" },
///     sortBy: [SortDescriptor(\.startDate, order: .reverse)])
/// descriptor.fetchLimit = 10
/// let trips = try context.fetch(descriptor)
/// ```
public struct FetchDescriptor<T: PersistentModel>: @unchecked Sendable {
    // @unchecked: Predicate and SortDescriptor are Sendable; the key path arrays are immutable values.
    /// The filter; `nil` fetches every model of the type.
    public var predicate: Predicate<T>?
    /// Sort keys, most significant first.
    public var sortBy: [SortDescriptor<T>]
    /// At most this many models.
    public var fetchLimit: Int?
    /// Skip this many models first.
    public var fetchOffset: Int?
    /// Whether unsaved inserts, changes and deletes of the context count (default `true`).
    public var includePendingChanges: Bool
    /// Only these attributes are read; the others load, with one query per model, when first accessed.
    /// Attributes without a neutral placeholder value (enums, for example) are always read.
    public var propertiesToFetch: [PartialKeyPath<T>]
    /// Relationships to load for every fetched model up front: one extra query per key path instead of
    /// one per model on first access.
    public var relationshipKeyPathsForPrefetching: [PartialKeyPath<T>]
    /// Whose models to fetch: all the user can see (the default), only their own, or only those others
    /// shared with them. PGModel's own: SwiftData has one user per store.
    ///
    /// ```swift
    /// var mine = FetchDescriptor<Trip>()
    /// mine.ownership = .owned
    /// ```
    public var ownership: FetchOwnership

    public init(predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
        self.fetchLimit = nil
        self.fetchOffset = nil
        self.includePendingChanges = true
        self.propertiesToFetch = []
        self.relationshipKeyPathsForPrefetching = []
        self.ownership = .all
    }
}
