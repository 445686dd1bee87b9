import Foundation
@_spi(PGModelInternals) import PGModelCore

/// Async forms of the batched reads and of `transaction(block:)`: the same results and errors as their
/// synchronous forms, suspending for each store round trip instead of blocking a thread (see
/// `ModelContext+Async.swift` for why a server wants them).
extension ModelContext {
    /// ``enumerate(_:batchSize:allowEscapingMutations:block:)``, suspending for each batch instead of
    /// blocking. The block may suspend too (to save with ``saveAsync()``, say); it runs on the caller's
    /// actor, one model at a time, in the descriptor's order.
    ///
    /// ```swift
    /// try await context.enumerateAsync(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate)]), batchSize: 500) { trip in
    ///     total += trip.nights
    /// }
    /// ```
    public nonisolated(nonsending) func enumerateAsync<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, batchSize: Int = 5000, allowEscapingMutations: Bool = false,
        block: nonisolated(nonsending) (T) async throws -> Void
    ) async throws {
        let (unsaved, firstPage) = try enumerationPages(descriptor, batchSize: batchSize)
        var pages = firstPage
        let hadChanges = hasChanges
        while let request = pages.next {
            var ids: [UUID] = []
            var count = 0
            // The batch's models die with this scope unless the block keeps them.
            do {
                let (models, last) = try await fetchModelsAsync(unsaved, request: request, pending: false)
                count = models.count
                if let last, let readers = pages.readers {
                    // Read before the block runs, so its saves cannot move the position.
                    pages.resume(after: last, values: try await keysetValuesAsync(of: last, readers: readers))
                }
                for model in models {
                    ids.append(model._$backingData.id)
                    try await block(model)
                }
            }
            try checkEscapingMutations(of: T.self, allowed: allowEscapingMutations, hadChanges: hadChanges)
            forgetReleased(ids)
            guard pages.advance(count: count, of: request) else { return }
        }
    }

    /// ``fetch(_:batchSize:)``, suspending instead of blocking for the identifiers and the first batch.
    /// Later batches load when their positions are read, blocking as in the synchronous form: a
    /// collection's subscript cannot suspend. To read a large result without blocking at all, use
    /// ``enumerateAsync(_:batchSize:allowEscapingMutations:block:)``.
    ///
    /// ```swift
    /// let trips = try await context.fetchAsync(FetchDescriptor<Trip>(), batchSize: 100)
    /// print(trips.count, trips.first?.name ?? "-")   // the first batch is already loaded
    /// ```
    public nonisolated(nonsending) func fetchAsync<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, batchSize: Int) async throws -> FetchResultsCollection<T> {
        guard batchSize > 0 else {
            throw PGModelError(.invalidField, "batchSize of a fetch of \(T._$entityName) must be positive", model: T._$entityName)
        }
        guard let fallback = standInProbe(for: T.self) else {
            let models = try await fetchAsync(descriptor)
            return FetchResultsCollection(loaded: models, identifiers: models.map(\.persistentModelID), entityName: T._$entityName)
        }
        let identifiers = try await fetchIdentifiersAsync(descriptor)
        let collection = FetchResultsCollection(identifiers: identifiers, batchSize: batchSize, entityName: T._$entityName,
            load: { slice in try self.alignedModels(slice, as: T.self) },
            standIn: { id in self.goneRowFault(for: id) as? T ?? fallback },
            release: { models in self.forgetReleased(models.map { $0._$backingData.id }) })
        let first = collection.batchIdentifiers(at: 0)
        if !first.isEmpty { collection.install(try await alignedModelsAsync(first, as: T.self), at: 0) }
        return collection
    }

    /// ``transaction(block:)``, suspending instead of blocking: runs `block` (which may suspend), then
    /// saves with ``saveAsync()``; if either throws, rolls back every unsaved change and rethrows.
    ///
    /// ```swift
    /// try await context.transactionAsync {
    ///     context.insert(Trip(name: "Oslo", destination: "Oslo", startDate: .now, endDate: .now))
    ///     let old = try await context.fetchAsync(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "Bergen" }))
    ///     old.forEach(context.delete)
    /// }
    /// ```
    public nonisolated(nonsending) func transactionAsync(block: nonisolated(nonsending) () async throws -> Void) async throws {
        do {
            try await block()
            try await saveAsync()
        } catch {
            rollback()
            throw error
        }
    }

    /// ``fetch(_:request:pending:)``, suspending: one page of models with its prefetches, and the last row read.
    nonisolated(nonsending) func fetchModelsAsync<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, request: FetchRequest,
                                                                      pending: Bool) async throws -> (models: [T], last: StoreRow?) {
        let rows = try await fetchRowsAsync(pending ? Self.unpaged(request) : request)
        let last = rows.last
        var kept: Set<UUID>?
        if pending, let check = ownershipCheck(of: T.self, request: request, rows: rows) {
            let store = container.store
            kept = Set(try await roundTripAsync { try await store.fetchIdentifiers(check) }.map(\.id))
        }
        let models = try models(from: rows, for: descriptor, of: request, mergingPending: pending, ownedChanges: kept)
        for keyPath in descriptor.relationshipKeyPathsForPrefetching {
            guard let load = try prefetchLoad(keyPath, for: models) else { continue }
            var related: [StoreRow] = []
            if let request = load.request { related = try await fetchRowsAsync(request) }
            try apply(load, rows: related)
        }
        return (models, last)
    }

    /// ``keysetValues(of:readers:)``, suspending for the related rows a key reaches through.
    nonisolated(nonsending) func keysetValuesAsync(of row: StoreRow, readers: [KeysetReader]) async throws -> [PGValue]? {
        var values: [PGValue] = []
        for reader in readers {
            var current = row.values
            for step in reader.steps {
                guard case .uuid(let id) = current[step.relationship] ?? .null else {
                    current = [:]
                    break
                }
                let request = FetchRequest(entity: step.destination, identifiers: [id])
                let store = container.store
                let rows = try StoreRow.rows(of: await roundTripAsync { try await store.fetchTable(request) })
                guard let related = rows.first else { return nil }
                current = related.values
            }
            guard let value = reader.value(in: current) else { return nil }
            values.append(value)
        }
        return values
    }

    /// ``alignedModels(_:as:)``, suspending: the model of each of `ids` at its position, nil where the row is gone.
    nonisolated(nonsending) func alignedModelsAsync<T: PersistentModel>(_ ids: [PersistentIdentifier], as type: T.Type) async throws -> [T?] {
        // The registry is weak: hold what it has and what is fetched until the result owns them.
        var found: [UUID: any PersistentModel] = [:]
        for id in ids { if let model = registered(id.uuid) { found[id.uuid] = model } }
        let missing = ids.map(\.uuid).filter { found[$0] == nil }
        if !missing.isEmpty {
            let rows = try await fetchRowsAsync(FetchRequest(entity: T._$entityName, identifiers: missing))
            defer { stagedRows = [:] }
            for row in rows { found[row.id] = try materializeConcrete(row) }
        }
        return ids.map { found[$0.uuid] as? T }
    }
}
