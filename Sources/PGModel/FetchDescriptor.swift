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
    /// Accepted for source compatibility; at this version every attribute is fetched.
    public var propertiesToFetch: [PartialKeyPath<T>]
    /// Accepted for source compatibility; relationships arrive in a later version.
    public var relationshipKeyPathsForPrefetching: [PartialKeyPath<T>]

    public init(predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
        self.fetchLimit = nil
        self.fetchOffset = nil
        self.includePendingChanges = true
        self.propertiesToFetch = []
        self.relationshipKeyPathsForPrefetching = []
    }
}
