import Foundation
@_spi(PGModelInternals) import PGModelCore

extension ModelContext {
    /// The models matching `descriptor`. With `includePendingChanges` (the default) unsaved inserts that
    /// match are included, unsaved deletes excluded, and unsaved changes taken into account.
    ///
    /// ```swift
    /// let paris = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.destination == "Paris" }))
    /// ```
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        let (_, request, pending) = try prepare(descriptor)
        return try fetch(descriptor, request: request, pending: pending).models
    }

    /// `descriptor`'s models fetched by `request` (its IR, possibly paged further), and the last row
    /// read, whose values position the next page of an enumeration.
    func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, request: FetchRequest,
                                   pending: Bool) throws -> (models: [T], last: StoreRow?) {
        let rows = try fetchRows(pending ? Self.unpaged(request) : request)
        let last = rows.last
        var kept: Set<UUID>?
        if pending, let check = ownershipCheck(of: T.self, request: request, rows: rows) {
            let store = container.store
            kept = Set(try roundTrip { try await store.fetchIdentifiers(check) }.map(\.id))
        }
        let models = try models(from: rows, for: descriptor, of: request, mergingPending: pending, ownedChanges: kept)
        for keyPath in descriptor.relationshipKeyPathsForPrefetching {
            guard let load = try prefetchLoad(keyPath, for: models) else { continue }
            try apply(load, rows: try load.request.map { try fetchRows($0) } ?? [])
        }
        return (models, last)
    }

    /// With unsaved changes of the entity, every match is fetched without paging, merged in memory, then paged.
    static func unpaged(_ request: FetchRequest) -> FetchRequest {
        var unpaged = request
        unpaged.limit = nil
        unpaged.offset = nil
        return unpaged
    }

    /// With an ownership filter and unsaved changes, the ids of the changed models of `T` the rows did not
    /// bring back, asked of the store with the same filter: the stored values of such a model may not
    /// match the predicate while its unsaved ones do, and only the store knows whose row it is. Nil when
    /// there is nothing to ask.
    func ownershipCheck<T: PersistentModel>(of type: T.Type, request: FetchRequest, rows: [StoreRow]) -> FetchRequest? {
        guard let ownership = request.ownership else { return nil }
        let returned = Set(rows.map(\.id))
        let ids = pendingModels(of: T.self).changed.compactMap { ($0 as? T)?._$backingData.id }.filter { !returned.contains($0) }
        guard !ids.isEmpty else { return nil }
        return FetchRequest(entity: request.entity, identifiers: ids, ownership: ownership)
    }

    /// The fetch's models from the rows `request` read: as they are, or merged with the context's unsaved
    /// changes and then sorted and paged in memory. With an ownership filter, `ownedChanges` holds the
    /// changed models outside `rows` that pass it (``ownershipCheck(of:request:rows:)``); unsaved inserts
    /// count as the user's own.
    func models<T: PersistentModel>(from rows: [StoreRow], for descriptor: FetchDescriptor<T>, of request: FetchRequest,
                                    mergingPending pending: Bool, ownedChanges: Set<UUID>? = nil) throws -> [T] {
        defer { stagedRows = [:] }
        var materialization = RowMaterialization(isPartial: request.properties != nil)
        guard pending else {
            // Most rows are new to the identity map: grow it once, not by doubling as they arrive.
            reserveRegistryCapacity(rows.count)
            // A context that has registered nothing and staged no partner (a fresh context per request,
            // as a server has) cannot have a model of any of these rows, whose ids are distinct (one
            // select by primary key); nothing building them registers one of them either, since partners
            // are staged first. Each model is then built without a lookup: half the hashing per row.
            materialization.rowsAreUnregistered = isRegistryEmpty && stagedRows.isEmpty
            return try rows.map { try typed($0, as: T.self, materialization) }
        }
        let changes = pendingModels(of: T.self)
        var seen = Set<UUID>()
        var candidates: [T] = []
        for row in rows where !changes.deleted.contains(row.id) {
            let model = try typed(row, as: T.self, materialization)
            if model.hasChanges, let predicate = descriptor.predicate, !(try predicate.evaluate(model)) { continue }
            if seen.insert(model._$backingData.id).inserted { candidates.append(model) }
        }
        let changed = changes.changed.compactMap { $0 as? T }.filter { model in
            request.ownership == nil || ownedChanges?.contains(model._$backingData.id) == true
        }
        let inserted = request.ownership == .sharedWithMe ? [] : changes.inserted.compactMap { $0 as? T }
        for model in changed + inserted where !seen.contains(model._$backingData.id) {
            if let predicate = descriptor.predicate, !(try predicate.evaluate(model)) { continue }
            seen.insert(model._$backingData.id)
            candidates.append(model)
        }
        if !descriptor.sortBy.isEmpty {
            candidates.sort(using: descriptor.sortBy)
        }
        let start = min(descriptor.fetchOffset ?? 0, candidates.count)
        let end = descriptor.fetchLimit.map { min(start + $0, candidates.count) } ?? candidates.count
        return Array(candidates[start..<end])
    }

    /// The attribute names to read for `propertiesToFetch`: the listed attributes plus those that cannot
    /// wait behind a placeholder; nil (everything) when the list is empty.
    private func propertiesToFetch<T: PersistentModel>(_ keyPaths: [PartialKeyPath<T>], of entity: Schema.Entity) throws -> [String]? {
        // Worked out once per schema: this runs for every fetch.
        guard !keyPaths.isEmpty else { return container.schema.defaultFetchProperties(of: entity) }
        var names: [String] = []
        for keyPath in keyPaths {
            guard let property = entity.property(for: keyPath) else {
                throw PGModelError(.invalidField, "propertiesToFetch of \(entity.name) names something that is not a stored property", model: entity.name)
            }
            if !property.isRelationship { names.append(property.name) }
        }
        // Subclass attributes of a deep fetch are read too: their classes are only known per row.
        let descendants = container.schema.entities(inHierarchyOf: entity).dropFirst().flatMap(\.attributeMetadata)
        for property in entity.attributeMetadata + descendants where !property.canBeFault && !names.contains(property.name) {
            names.append(property.name)
        }
        return names
    }

    /// A fetched row as its concrete class, which must be `T` or a subclass.
    func typed<T: PersistentModel>(_ row: StoreRow, as type: T.Type, _ materialization: RowMaterialization) throws -> T {
        let model = try materializeConcrete(row, materialization)
        guard let typed = model as? T else {
            throw PGModelError(.typeMismatch, "row \(row.id) is a \(Swift.type(of: model)), not a \(T.self)", model: T._$entityName)
        }
        return typed
    }

    /// The number of models matching `descriptor`, counted in PostgreSQL unless unsaved changes of the
    /// entity must be taken into account.
    public func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        let (_, request, pending) = try prepare(descriptor)
        if pending { return try fetch(descriptor).count }
        let store = container.store
        return try roundTrip { try await store.count(request) }
    }

    /// The identifiers of the models matching `descriptor`, without materializing them.
    public func fetchIdentifiers<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [PersistentIdentifier] {
        let (_, request, pending) = try prepare(descriptor)
        if pending { return try fetch(descriptor).map(\.persistentModelID) }
        let store = container.store
        let references = try roundTrip { try await store.fetchIdentifiers(request) }
        let storeIdentifier = container.storeIdentifier
        return references.map { PersistentIdentifier(entityName: $0.entity, id: $0.id, storeIdentifier: storeIdentifier, isTemporary: false) }
    }

    func prepare<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> (Schema.Entity, FetchRequest, Bool) {
        guard let entity = container.schema.entity(for: T.self) else {
            throw PGModelError(.unknownEntity, "\(T._$entityName) is not in this container's schema; add it to the ModelContainer", model: T._$entityName)
        }
        if let limit = descriptor.fetchLimit, limit < 0 {
            throw PGModelError(.invalidField, "fetchLimit of a fetch of \(entity.name) must not be negative", model: entity.name)
        }
        if let offset = descriptor.fetchOffset, offset < 0 {
            throw PGModelError(.invalidField, "fetchOffset of a fetch of \(entity.name) must not be negative", model: entity.name)
        }
        let translator = PredicateTranslator<T>(entity: entity)
        // Translated once per call site's shape, not per call (TranslationCache).
        let translations = container.translations
        let request = FetchRequest(
            entity: entity.name,
            predicate: try descriptor.predicate.map { try translations.translate($0, with: translator) },
            sort: try translations.translate(descriptor.sortBy, with: translator),
            limit: descriptor.fetchLimit,
            offset: descriptor.fetchOffset,
            properties: try propertiesToFetch(descriptor.propertiesToFetch, of: entity),
            ownership: descriptor.ownership.rowOwnership)
        let changes = pendingModels(of: T.self)
        let pending = descriptor.includePendingChanges
            && !(changes.inserted.isEmpty && changes.changed.isEmpty && changes.deleted.isEmpty)
        return (entity, request, pending)
    }
}
