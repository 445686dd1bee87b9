import Foundation

extension ModelContext {
    /// The models matching `descriptor`, grouped by `sectionBy`. (SwiftData declares a plain `KeyPath`;
    /// PGModel asks for a Sendable one because `SortDescriptor` does — key path literals are.) The section key becomes the first sort
    /// (unless `descriptor` already sorts by it first), so each section is contiguous and sections come
    /// in sort order.
    ///
    /// ```swift
    /// let byDestination = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate)]),
    ///                                       sectionBy: \.destination)
    /// ```
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, sectionBy: any KeyPath<T, String> & Sendable) throws -> SectionedResults<T, String> {
        var sorted = descriptor
        sorted.sortBy = Self.sectionSort(SortDescriptor(sectionBy), descriptor.sortBy, sectionBy)
        return SectionedResults(try fetch(sorted)) { $0[keyPath: sectionBy] }
    }

    /// The models matching `descriptor`, grouped by an optional `sectionBy`; models whose key is nil
    /// form the `""` section, as in SwiftData.
    ///
    /// ```swift
    /// let byCity = try context.fetch(FetchDescriptor<Trip>(), sectionBy: \.city)
    /// ```
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, sectionBy: any KeyPath<T, String?> & Sendable) throws -> SectionedResults<T, String> {
        var sorted = descriptor
        sorted.sortBy = Self.sectionSort(SortDescriptor(sectionBy), descriptor.sortBy, sectionBy)
        return SectionedResults(try fetch(sorted)) { $0[keyPath: sectionBy] ?? "" }
    }

    static func sectionSort<T>(_ section: SortDescriptor<T>, _ sortBy: [SortDescriptor<T>], _ keyPath: AnyKeyPath) -> [SortDescriptor<T>] {
        if let first = sortBy.first, first.keyPath == keyPath { return sortBy }
        return [section] + sortBy
    }
}
