import Foundation
import PGModelCore

extension ModelContext {
    /// Calls `block` with every model matching `descriptor`, fetching `batchSize` at a time: memory
    /// holds one batch, not the table. Unless `allowEscapingMutations`, a block that leaves unsaved
    /// changes behind makes this throw after its batch (SwiftData traps); save inside the block or
    /// allow them.
    ///
    /// ```swift
    /// try context.enumerate(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate)]), batchSize: 500) { trip in
    ///     total += trip.nights
    /// }
    /// ```
    public func enumerate<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, batchSize: Int = 5000, allowEscapingMutations: Bool = false,
        block: (T) throws -> Void
    ) throws {
        guard batchSize > 0 else {
            throw PGModelError(.invalidField, "batchSize of an enumeration of \(T._$entityName) must be positive", model: T._$entityName)
        }
        let hadChanges = hasChanges
        var offset = descriptor.fetchOffset ?? 0
        var remaining = descriptor.fetchLimit ?? Int.max
        while remaining > 0 {
            var page = descriptor
            page.fetchOffset = offset
            page.fetchLimit = Swift.min(batchSize, remaining)
            page.includePendingChanges = false
            var ids: [UUID] = []
            var count = 0
            // The batch's models die with this scope unless the block keeps them.
            do {
                let models = try fetch(page)
                count = models.count
                for model in models {
                    ids.append(model._$backingData.id)
                    try block(model)
                }
            }
            if !allowEscapingMutations && !hadChanges && hasChanges {
                throw PGModelError(.invalidField, "the enumerate block changed \(T._$entityName) models without saving; save in the block or pass allowEscapingMutations: true", model: T._$entityName)
            }
            forgetReleased(ids)
            guard count == page.fetchLimit else { return }
            offset += count
            remaining -= count
        }
    }

    /// The models matching `descriptor` as a collection that fetches `batchSize` models at a time when
    /// read: the identifiers are fetched now, the models on access, and only the current batch is kept.
    ///
    /// ```swift
    /// let trips = try context.fetch(FetchDescriptor<Trip>(), batchSize: 100)
    /// for trip in trips { print(trip.name) }
    /// ```
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, batchSize: Int) throws -> FetchResultsCollection<T> {
        guard batchSize > 0 else {
            throw PGModelError(.invalidField, "batchSize of a fetch of \(T._$entityName) must be positive", model: T._$entityName)
        }
        let identifiers = try fetchIdentifiers(descriptor)
        return FetchResultsCollection(context: self, identifiers: identifiers, batchSize: batchSize)
    }

    /// Drops registry entries of models nobody holds any more.
    func forgetReleased(_ ids: [UUID]) {
        for id in ids where registered(id) == nil { unregister(id) }
    }

    /// The models with `ids`, in that order, fetched in one query (registered ones are reused).
    func models<T: PersistentModel>(_ ids: [PersistentIdentifier], as type: T.Type) throws -> [T] {
        // The registry is weak: hold what it has and what is fetched until the result owns them.
        var found: [UUID: any PersistentModel] = [:]
        for id in ids { if let model = registered(id.id) { found[id.id] = model } }
        let missing = ids.map(\.id).filter { found[$0] == nil }
        if !missing.isEmpty {
            let request = FetchRequest(entity: T._$entityName, identifiers: missing)
            let rows = try fetchRows(request)
            defer { stagedRows = [:] }
            for row in rows { found[row.id] = try materializeConcrete(row) }
        }
        return ids.compactMap { found[$0.id] as? T }
    }
}

/// The result of `fetch(_:batchSize:)`: a random-access collection that loads its models a batch at a
/// time. Not Sendable: use it where its context lives.
///
/// ```swift
/// let trips = try context.fetch(FetchDescriptor<Trip>(), batchSize: 100)
/// print(trips.count, trips[250].name)   // loads the batch holding index 250
/// ```
public final class FetchResultsCollection<Element: PersistentModel>: RandomAccessCollection {
    public let startIndex = 0
    public var endIndex: Int { identifiers.count }

    private let context: ModelContext
    private let identifiers: [PersistentIdentifier]
    private let batchSize: Int
    private var batchStart = -1
    private var batch: [Element] = []
    /// The error of the last batch that could not be loaded.
    public private(set) var lastError: PGModelError?

    init(context: ModelContext, identifiers: [PersistentIdentifier], batchSize: Int) {
        self.context = context
        self.identifiers = identifiers
        self.batchSize = batchSize
    }

    /// The model at `position`. A model deleted since the identifiers were fetched cannot be returned;
    /// reading it traps, as SwiftData does — check `lastError` or prefer `enumerate` when rows may vanish.
    public subscript(position: Int) -> Element {
        let start = (position / batchSize) * batchSize
        if start != batchStart { load(start) }
        let index = position - start
        return batch[index]
    }

    private func load(_ start: Int) {
        let previous = batch.map { $0._$backingData.id }
        batch = []
        context.forgetReleased(previous)
        let slice = Array(identifiers[start..<Swift.min(start + batchSize, identifiers.count)])
        do {
            batch = try context.models(slice, as: Element.self)
            batchStart = start
            if batch.count != slice.count {
                lastError = PGModelError(.notFound, "\(slice.count - batch.count) \(Element._$entityName) models were deleted since the fetch", model: Element._$entityName)
            }
        } catch {
            lastError = error as? PGModelError ?? PGModelError(.internalError, "loading a batch failed: \(type(of: error))")
            batchStart = -1
        }
    }
}
