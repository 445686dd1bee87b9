import Foundation
@_spi(PGModelInternals) import PGModelCore

/// Tracks the models you insert, change and delete, and writes them with `save()`.
///
/// Not Sendable: use one context per task or actor; share the container and `PersistentIdentifier`s.
/// Each identifier maps to one instance per context.
///
/// ```swift
/// let context = ModelContext(container)
/// context.insert(Trip(name: "Paris", destination: "Paris", startDate: .now, endDate: .now))
/// try context.save()
/// let trips = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.destination == "Paris" }))
/// ```
public final class ModelContext {
    /// The container whose store this context reads and writes.
    public let container: ModelContainer
    /// Save automatically after changes: `true` for `mainContext`, `false` otherwise.
    public var autosaveEnabled: Bool = false
    /// Recorded with each save (history uses it).
    public var author: String?
    /// What a save does when a model it changes or deletes was changed (or deleted) by someone else since
    /// this context read it: another context, process or user. Changes to different attributes always
    /// merge; the policy decides only for an attribute changed on both sides. The default,
    /// ``MergePolicy/error``, throws `save_conflict` and writes nothing, as Core Data's default does.
    ///
    /// ```swift
    /// context.mergePolicy = .mergeByPropertyObjectTrump   // this context's values win
    /// ```
    public var mergePolicy: MergePolicy = .error
    /// The error of the last failed autosave, if any; the changes stay pending and the next `save()` retries.
    public private(set) var lastAutosaveError: PGModelError?

    /// The error of the last relationship fault that could not be loaded (its placeholder stayed).
    public internal(set) var lastFaultError: PGModelError?
    /// Store round trips made by this context (tests assert query counts with it).
    var storeRoundTrips = 0
    /// Partner rows fetched ahead for the models being built (see `partnerRequests(for:)`).
    var stagedRows: [UUID: StoreRow] = [:]
    /// Per-class facts kept only for speed (see ``ContextCaches``).
    var caches = ContextCaches()

    var isMainContext = false
    private var isAutosaveScheduled = false

    /// One weak entry per registered identifier: the context does not keep clean models alive.
    private var registry: [UUID: WeakModel] = [:]
    /// Pending changes, in the order they happened, keyed by row id.
    private(set) var inserted = OrderedModels()
    var changed = OrderedModels()
    var deleted = OrderedModels()
    /// Models inserted and deleted again before a save: nothing of them is stored, but the save applies
    /// their delete rules to the models they reach (see ``pendingDeletions()``).
    private(set) var discardedInserts = OrderedModels()
    /// `delete(model:where:)` requests for the next save.
    private var batchDeletes: [FetchRequest] = []
    /// `share` / `unshare` requests for the next save.
    var pendingShares: [PendingShare] = []
    /// The ResultsObservers fetching in this context (weakly): a save here marks them stale at once.
    var observerInvalidations: [WeakInvalidation] = []

    /// A context on `container`.
    public init(_ container: ModelContainer) {
        self.container = container
    }

    // MARK: Pending changes

    /// Whether there are unsaved inserts, changes or deletes.
    public var hasChanges: Bool { !inserted.isEmpty || !changed.isEmpty || !deleted.isEmpty || !batchDeletes.isEmpty || !pendingShares.isEmpty }

    /// Models inserted and not yet saved.
    public var insertedModelsArray: [any PersistentModel] { inserted.models }
    /// Saved models with unsaved changes.
    public var changedModelsArray: [any PersistentModel] { changed.models }
    /// Models deleted and not yet saved.
    public var deletedModelsArray: [any PersistentModel] { deleted.models }

    /// Inserts `model`; the next save writes it. Inserting a model twice does nothing.
    public func insert<T: PersistentModel>(_ model: T) {
        let data = model._$backingData
        mutationCount &+= 1
        if data.context === self {
            if data.state == .deleted { undelete(model) }
            return
        }
        if let other = data.context, other !== self, data.state != .detached {
            // SwiftData crashes here; PGModel makes the next save throw instead.
            pendingError = PGModelError(.invalidField,
                "a \(T._$entityName) was inserted into a second ModelContext; use the first or fetch it in this one", model: T._$entityName)
            return
        }
        data.context = self
        if data.state == .persisted {
            register(model)
            return
        }
        data.state = .inserted
        register(model)
        inserted.add(model, id: data.id)
        // SwiftData inserts the graph reachable from an inserted model, and its partners' inverses take it
        // in: a relationship set in the model's initializer (`Note(doc: doc)`) bypassed the setter that
        // keeps them in step.
        var entity: Schema.Entity?
        for property in caches.relationshipsOfLastClass.relationships(of: model)
        where !data.faults.contains(property.name) {
            let related = property.relationship?.models(model) ?? []
            guard !related.isEmpty else { continue }
            if entity == nil { entity = ModelGraph.entity(for: type(of: model)) }
            if let inverse = entity?.relationshipDescription(named: property.name)?.inverse {
                for partner in related where !partner._$backingData.faults.contains(inverse) {
                    RelationshipMaintenance.link(partner, inverse, to: model)
                }
            }
            for related in related where related._$backingData.state == .detached {
                insertModel(related)
            }
        }
        scheduleAutosave()
    }

    /// Deletes `model`; the next save removes its row. Deleting an unsaved insert just forgets it.
    public func delete<T: PersistentModel>(_ model: T) {
        let data = model._$backingData
        mutationCount &+= 1
        switch data.state {
        case .inserted:
            inserted.remove(data.id)
            discardedInserts.add(model, id: data.id)
            registry[data.id] = nil
            data.stateBeforeDelete = .detached
            data.state = .deleted
        case .persisted:
            if data.context == nil { data.context = self; register(model) }
            data.stateBeforeDelete = .persisted
            data.state = .deleted
            deleted.add(model, id: data.id)
        case .detached, .deleted:
            return
        }
        scheduleAutosave()
    }

    /// Writes every pending insert, change and delete in one transaction: all or nothing. On error
    /// nothing is written and every change stays pending, so you can fix it and save again or roll back.
    public func save() throws {
        guard let prepared = try prepareSave() else { return }
        let store = container.store
        let request = prepared.request
        let result = try roundTrip { try await store.save(request) }
        finishSave(prepared, result: result)
        postDidSave(prepared, result: result)
    }

    /// What a save sends and what it needs afterwards to mark the models saved.
    struct PreparedSave {
        var request: SaveRequest
        var inserted: [any PersistentModel]
        var changed: [any PersistentModel]
        var deleted: [any PersistentModel]
        /// The snapshot names of each ``RowKeys`` of `request.inserts`, whose rows are the snapshots
        /// ``inserted`` leave once saved, in its order (``ModelContext/snapshot(of:keys:)``).
        var insertedKeys: [ObjectIdentifier: StoredKeys]
        var updatedValues: [UUID: [String: PGValue]]
        /// ``mutationCount`` when the request was built: a different count at the end means the app
        /// changed the context while an async save was suspended.
        var mutationCount: Int
        /// Inserted models the save drops (deleted before their first save, or cascaded from a deleted
        /// model): once it succeeds they are deleted without ever having been stored.
        var unsaved: [any PersistentModel] = []
    }

    /// Builds the save's request from the pending changes; nil when there is nothing to save.
    func prepareSave() throws -> PreparedSave? {
        if let error = pendingError {
            pendingError = nil
            throw error
        }
        guard hasChanges else { return nil }
        guard container.allowsSave else {
            throw PGModelError(.saveNotAllowed, "this ModelContainer's configuration has allowsSave: false")
        }
        postWillSave()
        insertReachableGraph()
        let deletions = try pendingDeletions()
        try validateRelationshipCounts(skipping: deletions)
        let schema = container.schema
        var request = SaveRequest(author: author, mergePolicy: mergePolicy)
        request.batchDeletes = batchDeletes
        var insertedKeys: [ObjectIdentifier: StoredKeys] = [:]
        request.inserts.reserveCapacity(inserted.models.count)
        var insertedModels = inserted.models
        if let deletions, !deletions.unsaved.isEmpty { insertedModels.removeAll { deletions.contains($0) } }
        for model in insertedModels {
            let (built, snapshotKeys) = try insertedRow(of: model, in: schema)
            var row = built
            if let deletions { nullifyingDeleted(&row, of: model, deletions) }
            if let (rowKeys, _) = row.positionalValues, insertedKeys[ObjectIdentifier(rowKeys)] == nil {
                insertedKeys[ObjectIdentifier(rowKeys)] = snapshotKeys
            }
            request.inserts.append(row)
            request.links += linkChanges(of: model, isInsert: true)
        }
        var updatedValues: [UUID: [String: PGValue]] = [:]
        for model in changed.models {
            let data = model._$backingData
            // Changed, then deleted: the delete is all that is left to write (its row and join rows go).
            guard data.state != .deleted, deletions?.contains(model) != true else { continue }
            var values = try storedValues(of: model, in: schema, keys: data.changedKeys)
            if let deletions { nullifyingDeleted(&values, of: model, deletions) }
            // Setting a property to the value it already has is no change worth a round trip.
            let changes = values.filter { data.storedValues[$0.key] != $0.value }
            request.links += linkChanges(of: model, isInsert: false)
            guard !changes.isEmpty else { continue }
            updatedValues[data.id] = changes
            var row = RowValues(entity: type(of: model)._$entityName, id: data.id, values: changes)
            row.ancestor = ancestor(of: model, keys: changes.keys)
            addMergeRules(of: model, to: &request)
            request.updates.append(row)
        }
        if let deletions {
            // Links to or from a deleted model go with its row (or were never stored).
            request.links.removeAll { deletions.ids.contains($0.source) || deletions.ids.contains($0.destination) }
            for model in deletions.stored {
                let entity = ModelGraph.entity(for: type(of: model))
                let keys = entity.propertyMetadata.lazy.filter { $0.relationship.map { !$0.isToMany } ?? !$0.isEphemeral }.map(\.name)
                request.deletes.append(RowReference(entity: type(of: model)._$entityName, id: model._$backingData.id,
                                                    ancestor: ancestor(of: model, keys: keys)))
                addMergeRules(of: model, to: &request)
            }
        }
        request.shares = pendingShares.map(\.change)
        return PreparedSave(request: request, inserted: insertedModels, changed: changed.models, deleted: deleted.models,
                            insertedKeys: insertedKeys, updatedValues: updatedValues, mutationCount: mutationCount,
                            unsaved: deletions?.unsaved ?? [])
    }

    /// Marks what `prepared` wrote as saved. Changes the app made after the request was built (while an
    /// async save was suspended) stay pending for the next save.
    func finishSave(_ prepared: PreparedSave, result: SaveResult) {
        let interleaved = prepared.mutationCount != mutationCount
        var stillPending: [any PersistentModel] = []
        for (i, model) in prepared.inserted.enumerated() {
            let data = model._$backingData
            let oldID = data.id
            let wasDeletedMeanwhile = data.state != .inserted
            data.storedValues = i < prepared.request.inserts.count
                ? Self.snapshot(of: prepared.request.inserts[i], keys: prepared.insertedKeys) : StoredValues()
            if !interleaved { recordSavedLinks(of: model) }
            data.state = .persisted
            if !result.remappedIdentifiers.isEmpty, let existing = result.remappedIdentifiers[oldID] {
                // Upsert: the model is now the existing row.
                registry[oldID] = nil
                data.id = existing
                register(model)
            }
            if wasDeletedMeanwhile {
                // Deleted while the save was in flight: the row exists now, so its delete is pending.
                data.changedKeys = []
                data.context = self
                register(model)
                data.stateBeforeDelete = .persisted
                data.state = .deleted
                stillPending.append(model)
            } else if interleaved {
                if keepUnsavedChanges(of: model) { stillPending.append(model) }
            } else {
                data.changedKeys = []
            }
        }
        for model in prepared.changed {
            let data = model._$backingData
            for (key, value) in prepared.updatedValues[data.id] ?? [:] { data.storedValues[key] = value }
            if !interleaved { recordSavedLinks(of: model) }
            if interleaved {
                if keepUnsavedChanges(of: model) { stillPending.append(model) }
            } else {
                data.changedKeys = []
            }
        }
        for model in prepared.deleted {
            registry[model._$backingData.id] = nil
            model._$backingData.changedKeys = []
        }
        for model in prepared.unsaved {
            let data = model._$backingData
            if data.state == .inserted {
                inserted.remove(data.id)
                registry[data.id] = nil
                data.stateBeforeDelete = .detached
                data.state = .deleted
            }
            discardedInserts.remove(data.id)
        }
        if interleaved {
            // Links changed meanwhile were not saved: the stored links are those the request wrote.
            for link in prepared.request.links {
                guard let data = registered(link.source)?._$backingData else { continue }
                if link.isAdded {
                    data.storedLinks[link.relationship, default: []].insert(link.destination)
                } else {
                    data.storedLinks[link.relationship]?.remove(link.destination)
                }
            }
            let saved = Set((prepared.inserted + prepared.changed + prepared.deleted).map { ObjectIdentifier($0) })
            var remainingInserted = OrderedModels(), remainingChanged = OrderedModels(), remainingDeleted = OrderedModels()
            for model in inserted.models where !saved.contains(ObjectIdentifier(model)) { remainingInserted.add(model, id: model._$backingData.id) }
            for model in changed.models where !saved.contains(ObjectIdentifier(model)) { remainingChanged.add(model, id: model._$backingData.id) }
            for model in deleted.models where !saved.contains(ObjectIdentifier(model)) { remainingDeleted.add(model, id: model._$backingData.id) }
            for model in stillPending {
                if model._$backingData.state == .deleted {
                    remainingDeleted.add(model, id: model._$backingData.id)
                } else {
                    remainingChanged.add(model, id: model._$backingData.id)
                }
            }
            inserted = remainingInserted
            changed = remainingChanged
            deleted = remainingDeleted
            batchDeletes.removeFirst(min(prepared.request.batchDeletes.count, batchDeletes.count))
            pendingShares.removeFirst(min(prepared.request.shares.count, pendingShares.count))
        } else {
            inserted = OrderedModels()
            changed = OrderedModels()
            deleted = OrderedModels()
            batchDeletes = []
            pendingShares = []
        }
        lastAutosaveError = nil
        // What a merge stored instead of this context's values (the store's, a sum, a union) is what the
        // models show now, and so is every updated row whole (others' changes this save did not touch);
        // a row someone else deleted is gone here too.
        for row in result.merged { applyStoredValues(row) }
        applyStoredRows(result.stored)
        forgetDeleted(Set(result.deleted.map(\.id)).union(prepared.unsaved.map { $0._$backingData.id })
            .union(result.dropped.map(\.id)))
        // Read-your-writes for this context's observers: stale now, not when the history feed gets there.
        let request = prepared.request
        // One pass per list: no array of every row's class name.
        var touched = Set<String>()
        for row in request.inserts { touched.insert(row.entity) }
        for row in request.updates { touched.insert(row.entity) }
        for reference in request.deletes { touched.insert(reference.entity) }
        for fetch in request.batchDeletes { touched.insert(fetch.entity) }
        for link in request.links { touched.insert(link.entity) }
        for reference in result.deleted { touched.insert(reference.entity) }
        if !touched.isEmpty {
            observerInvalidations.removeAll { $0.invalidation == nil }
            for entry in observerInvalidations { entry.invalidation?.receive(entities: touched) }
        }
    }

    /// After an interleaved save: keeps as changed only the keys whose value now differs from what was
    /// saved. Returns whether any remain.
    private func keepUnsavedChanges(of model: any PersistentModel) -> Bool {
        let data = model._$backingData
        guard !data.changedKeys.isEmpty,
              let current = try? storedValues(of: model, in: container.schema, keys: data.changedKeys) else {
            data.changedKeys = []
            return false
        }
        data.changedKeys = data.changedKeys.filter { key in
            guard let value = current[key] else { return true }   // a to-many: the next save diffs its links
            return data.storedValues[key] != value
        }
        return !data.changedKeys.isEmpty
    }

    /// Deletes every `T` matching `predicate` at the next save, in one statement per table plus delete
    /// rules, without fetching them. Registered models that match are marked deleted after the save.
    ///
    /// ```swift
    /// try context.delete(model: Track.self, where: #Predicate { $0.genre == "Classical" })
    /// try context.save()
    /// ```
    public func delete<T: PersistentModel>(model: T.Type, where predicate: Predicate<T>? = nil, includeSubclasses: Bool = true) throws {
        guard let entity = container.schema.entity(for: T.self) else {
            throw PGModelError(.unknownEntity, "\(T._$entityName) is not in this container's schema; add it to the ModelContainer", model: T._$entityName)
        }
        var condition = try predicate.map { try PredicateTranslator<T>(entity: entity).translate($0) }
        if !includeSubclasses, container.schema.schemaDescription.entityNames(inHierarchyOf: entity.name).count > 1 {
            // Only rows of exactly this class: not of any subclass.
            let exact = QueryExpression.and([.isKind(entity.name)] + container.schema.schemaDescription
                .entityNames(inHierarchyOf: entity.name).dropFirst().map { QueryExpression.not(.isKind($0)) })
            condition = condition.map { .and([$0, exact]) } ?? exact
        }
        mutationCount &+= 1
        batchDeletes.append(FetchRequest(entity: entity.name, predicate: condition))
        scheduleAutosave()
    }

    /// Discards every pending change: inserts are forgotten, changed properties get their stored values
    /// back, deletes are undone.
    public func rollback() {
        mutationCount &+= 1
        pendingError = nil
        batchDeletes = []
        pendingShares = []
        for model in inserted.models {
            let data = model._$backingData
            registry[data.id] = nil
            data.state = .detached
            data.context = nil
            data.changedKeys = []
        }
        for model in changed.models + deleted.models {
            restoreStoredValues(of: model)
            model._$backingData.state = .persisted
        }
        inserted = OrderedModels()
        changed = OrderedModels()
        deleted = OrderedModels()
        discardedInserts = OrderedModels()
    }

    /// Runs `block`, then saves; if `block` or the save throws, rolls back and rethrows.
    public func transaction(block: () throws -> Void) throws {
        do {
            try block()
            try save()
        } catch {
            rollback()
            throw error
        }
    }

    // MARK: Identity

    /// The model registered in this context for `persistentModelID`, if any; never touches the store.
    public func registeredModel<T: PersistentModel>(for persistentModelID: PersistentIdentifier) -> T? {
        registry[persistentModelID.uuid]?.model as? T
    }

    /// The model for `persistentModelID`: the registered instance, or one fetched from the store.
    ///
    /// SwiftData's signature: it never throws. When the row is gone (or the store cannot be reached),
    /// the model is a fault whose row is gone, as SwiftData's is — but where SwiftData's crashes on
    /// access, PGModel's properties keep empty values (`""`, `0`, `nil`, `[]`) and ``lastFaultError``
    /// says why. Use ``modelAsync(for:)`` for the same lookup as a throwing call.
    ///
    /// ```swift
    /// if let trip = context.model(for: id) as? Trip, context.lastFaultError == nil { print(trip.name) }
    /// ```
    public func model(for persistentModelID: PersistentIdentifier) -> any PersistentModel {
        do {
            return try existingModel(for: persistentModelID)
        } catch {
            lastFaultError = error as? PGModelError
                ?? PGModelError(.internalError, "model(for:) failed: \(type(of: error))", model: persistentModelID.entityName)
            return goneRowFault(for: persistentModelID)
        }
    }

    /// A model whose row is gone: registered under its identifier, every property a fault holding its
    /// empty value; reading one tries the store again and, the row still missing, sets ``lastFaultError``.
    /// A class outside the schema, or one with a property that has no empty value (a non-optional enum,
    /// a non-optional to-one), gets a stand-in (``UnavailableModel``).
    func goneRowFault(for persistentModelID: PersistentIdentifier) -> any PersistentModel {
        if let entity = container.schema.entity(named: persistentModelID.entityName) {
            let row = StoreRow(entity: entity.name, id: persistentModelID.uuid, values: StoredValues(), via: nil)
            if let model = try? materializeAny(row, as: entity.type, RowMaterialization(isPartial: true)) { return model }
        }
        return UnavailableModel(id: persistentModelID.uuid)
    }

    /// ``model(for:)`` as a throwing lookup: `notFound` when the row is gone, `unknownEntity` for a class
    /// outside the schema.
    func existingModel(for persistentModelID: PersistentIdentifier) throws -> any PersistentModel {
        if let model = registry[persistentModelID.uuid]?.model { return model }
        guard let entity = container.schema.entity(named: persistentModelID.entityName) else {
            throw PGModelError(.unknownEntity, "\(persistentModelID.entityName) is not in this container's schema", model: persistentModelID.entityName)
        }
        let rows = try fetchRows(FetchRequest(entity: entity.name, identifiers: [persistentModelID.uuid]))
        return try modelFromIdentifierFetch(rows, persistentModelID)
    }

    /// The model of a ``model(for:)`` fetch: its one row, or `notFound`.
    func modelFromIdentifierFetch(_ rows: [StoreRow], _ persistentModelID: PersistentIdentifier) throws -> any PersistentModel {
        defer { stagedRows = [:] }
        guard let row = rows.first else {
            throw PGModelError(.notFound, "no \(persistentModelID.entityName) with id \(persistentModelID.uuid.uuidString.lowercased()) exists",
                               model: persistentModelID.entityName)
        }
        return try materializeConcrete(row)
    }

    // MARK: Internals

    private var pendingError: PGModelError?
    /// Counts changes to the context's models and pending sets, so an async save can tell whether the
    /// app changed anything while it was suspended.
    var mutationCount = 0

    func modelDidChange(_ model: any PersistentModel) {
        let data = model._$backingData
        mutationCount &+= 1
        guard data.context === self, data.state == .persisted else { return }
        changed.add(model, id: data.id)
        scheduleAutosave()
    }

    func register(_ model: any PersistentModel) {
        registry[model._$backingData.id] = WeakModel(model)
    }

    /// Room for `count` more registered models.
    func reserveRegistryCapacity(_ count: Int) {
        registry.reserveCapacity(registry.count + count)
    }

    /// Whether no model is registered (a context that has fetched and inserted nothing yet).
    var isRegistryEmpty: Bool { registry.isEmpty }

    func registered(_ id: UUID) -> (any PersistentModel)? {
        registry[id]?.model
    }

    func unregister(_ id: UUID) {
        registry[id] = nil
    }

    /// The registered models, in id order (UUIDv7: roughly creation order), the same in every run.
    func registeredModels() -> [any PersistentModel] {
        registry.keys.sorted { $0.uuidString < $1.uuidString }.compactMap { registry[$0]?.model }
    }

    private func undelete(_ model: any PersistentModel) {
        let data = model._$backingData
        deleted.remove(data.id)
        discardedInserts.remove(data.id)
        data.state = data.stateBeforeDelete == .detached ? .inserted : data.stateBeforeDelete
        if data.state == .inserted { inserted.add(model, id: data.id) }
        register(model)
    }

    func storedValues(of model: any PersistentModel, in schema: Schema, keys: Set<String>?) throws -> [String: PGValue] {
        let type = Swift.type(of: model)
        guard let entity = schema.entity(for: type) else {
            throw PGModelError(.unknownEntity, "\(type._$entityName) is not in this container's schema; add it to the ModelContainer", model: type._$entityName)
        }
        var values: [String: PGValue] = [:]
        let data = model._$backingData
        for property in entity.propertyMetadata where keys == nil || keys?.contains(property.name) == true {
            if property.isEphemeral { continue }
            if let relationship = property.relationship {
                // To-many links are saved as join rows or as the other side's key; a to-one fault is unchanged.
                guard !relationship.isToMany, let (_, storage) = self.storage(of: property.name, in: entity),
                      case .foreignKey = storage else { continue }
                if data.faults.contains(property.name) {
                    values[property.name] = data.storedValues[property.name] ?? .null
                } else {
                    values[property.name] = property.read(model) ?? .null
                }
                continue
            }
            guard let value = property.read(model) else {
                throw PGModelError(.internalError, "property '\(property.name)' of \(entity.name) could not be read", model: entity.name, keyPath: property.name)
            }
            values[property.name] = value
        }
        return values
    }

    func restoreStoredValues(of model: any PersistentModel) {
        let data = model._$backingData
        guard let entity = container.schema.entity(for: type(of: model)) else { return }
        data.isApplyingStoredValues = true
        defer { data.isApplyingStoredValues = false }
        for property in entity.propertyMetadata where data.changedKeys.contains(property.name) {
            if let relationship = property.relationship {
                // The stored side is reloaded on next access.
                if relationship.isToMany || relationship.isOptional {
                    try? relationship.assign(model, [])
                    data.faults.insert(property.name)
                } else if case .uuid(let id)? = data.storedValues[property.name], let target = registered(id) {
                    try? relationship.assign(model, [target])
                }
                continue
            }
            if let stored = data.storedValues[property.name] {
                try? property.write(model, stored)
            }
        }
        data.changedKeys = []
    }

    /// Applies a fresh row to a registered model that has no unsaved changes, so fetches show what other
    /// contexts saved; a model with unsaved changes keeps them.
    func refresh(_ model: any PersistentModel, with row: StoreRow, entity: Schema.Entity) {
        let data = model._$backingData
        guard data.changedKeys.isEmpty, data.state == .persisted else { return }
        data.isApplyingStoredValues = true
        defer { data.isApplyingStoredValues = false }
        for property in entity.propertyMetadata {
            guard let value = row.values[property.name], data.storedValues[property.name] != value else { continue }
            if let relationship = property.relationship {
                // Another context relinked it: load the new partner on next access.
                if relationship.isOptional { try? relationship.assign(model, []); data.faults.insert(property.name) }
                continue
            }
            try? property.write(model, value)
            data.faults.remove(property.name)
        }
        // A partial row (`propertiesToFetch`) refreshes only what it has.
        data.storedValues.merge(row.values)
    }

    func materialize<T: PersistentModel>(_ row: StoreRow, as type: T.Type, _ materialization: RowMaterialization = .standard) throws -> T {
        if materialization.rowsAreUnregistered { return try build(row, as: T.self, materialization) }
        if let existing = registry[row.id]?.model {
            guard let typed = existing as? T else {
                throw PGModelError(.typeMismatch, "row \(row.id) is registered as \(Swift.type(of: existing)), not \(T.self)", model: T._$entityName)
            }
            if let entity = container.schema.entity(for: T.self) { refresh(typed, with: row, entity: entity) }
            return typed
        }
        return try build(row, as: T.self, materialization)
    }

    /// A new model of `row`, which no registered model has: ``materialize(_:as:_:)`` past its lookup.
    private func build<T: PersistentModel>(_ row: StoreRow, as type: T.Type, _ materialization: RowMaterialization) throws -> T {
        // The context is set before the model's init runs: a non-optional to-one loads its partner there.
        let data = ModelBackingData(row: row, traits: storageTraits(of: T.self), isPartial: materialization.isPartial, context: self)
        let model = try T(backingData: data)
        // `init(backingData:)` keeps `data` as the model's backing data, context and id included.
        registry[row.id] = WeakModel(model)
        return model
    }

    /// Which properties of `type` are ephemeral or transformed: a property of the class, worked out once
    /// per class and context, and the last class's kept aside, since a fetch's rows are mostly of one.
    private func storageTraits<T: PersistentModel>(of type: T.Type) -> StorageTraits {
        let key = ObjectIdentifier(T.self)
        if let last = caches.lastStorageTraits, last.type == key { return last.traits }
        let traits: StorageTraits
        if let known = caches.storageTraits[key] {
            traits = known
        } else {
            traits = StorageTraits(ModelGraph.entity(for: T.self))
            caches.storageTraits[key] = traits
        }
        caches.lastStorageTraits = (key, traits)
        return traits
    }

    func materializeAny(_ row: StoreRow, as type: any PersistentModel.Type,
                        _ materialization: RowMaterialization = .standard) throws -> any PersistentModel {
        try materialize(row, as: type, materialization)
    }

    /// Pending models of `T` or a subclass of it.
    func pendingModels<T: PersistentModel>(of type: T.Type) -> (inserted: [any PersistentModel], changed: [any PersistentModel], deleted: Set<UUID>) {
        (inserted.models.filter { $0 is T },
         changed.models.filter { $0 is T },
         Set(deleted.models.filter { $0 is T }.map { $0._$backingData.id }))
    }

    func scheduleAutosave() {
        guard autosaveEnabled, isMainContext, !isAutosaveScheduled else { return }
        isAutosaveScheduled = true
        // The main context is only ever used on the main actor (ModelContainer.mainContext is @MainActor).
        nonisolated(unsafe) let context = self
        Task { @MainActor in
            context.isAutosaveScheduled = false
            guard context.autosaveEnabled, context.hasChanges else { return }
            do {
                try context.save()
            } catch let error as PGModelError {
                context.lastAutosaveError = error
            } catch {
                context.lastAutosaveError = PGModelError(.internalError, "autosave failed: \(type(of: error))")
            }
        }
    }
}

/// A weak reference to a model.
struct WeakModel {
    weak var model: (any PersistentModel)?
    init(_ model: any PersistentModel) { self.model = model }
}
