import Foundation
import PGModelCore

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
    /// The error of the last failed autosave, if any; the changes stay pending and the next `save()` retries.
    public private(set) var lastAutosaveError: PGModelError?

    var isMainContext = false
    private var isAutosaveScheduled = false

    /// One weak entry per registered identifier: the context does not keep clean models alive.
    private var registry: [UUID: WeakModel] = [:]
    /// Pending changes, in the order they happened, keyed by row id.
    private var inserted = OrderedModels()
    private var changed = OrderedModels()
    private var deleted = OrderedModels()

    /// A context on `container`.
    public init(_ container: ModelContainer) {
        self.container = container
    }

    // MARK: Pending changes

    /// Whether there are unsaved inserts, changes or deletes.
    public var hasChanges: Bool { !inserted.isEmpty || !changed.isEmpty || !deleted.isEmpty }

    /// Models inserted and not yet saved.
    public var insertedModelsArray: [any PersistentModel] { inserted.models }
    /// Saved models with unsaved changes.
    public var changedModelsArray: [any PersistentModel] { changed.models }
    /// Models deleted and not yet saved.
    public var deletedModelsArray: [any PersistentModel] { deleted.models }

    /// Inserts `model`; the next save writes it. Inserting a model twice does nothing.
    public func insert<T: PersistentModel>(_ model: T) {
        let data = model._$backingData
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
        scheduleAutosave()
    }

    /// Deletes `model`; the next save removes its row. Deleting an unsaved insert just forgets it.
    public func delete<T: PersistentModel>(_ model: T) {
        let data = model._$backingData
        switch data.state {
        case .inserted:
            inserted.remove(data.id)
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
        if let error = pendingError {
            pendingError = nil
            throw error
        }
        guard hasChanges else { return }
        guard container.allowsSave else {
            throw PGModelError(.saveNotAllowed, "this ModelContainer's configuration has allowsSave: false")
        }
        let schema = container.schema
        var request = SaveRequest(author: author)
        var insertedValues: [UUID: [String: PGValue]] = [:]
        for model in inserted.models {
            let values = try storedValues(of: model, in: schema, keys: nil)
            insertedValues[model._$backingData.id] = values
            request.inserts.append(RowValues(entity: type(of: model)._$entityName, id: model._$backingData.id, values: values))
        }
        var updatedValues: [UUID: [String: PGValue]] = [:]
        for model in changed.models {
            let data = model._$backingData
            let values = try storedValues(of: model, in: schema, keys: data.changedKeys)
            // Setting a property to the value it already has is no change worth a round trip.
            let changes = values.filter { data.storedValues[$0.key] != $0.value }
            guard !changes.isEmpty else { continue }
            updatedValues[data.id] = changes
            request.updates.append(RowValues(entity: type(of: model)._$entityName, id: data.id, values: changes))
        }
        for model in deleted.models {
            request.deletes.append(RowReference(entity: type(of: model)._$entityName, id: model._$backingData.id))
        }
        let store = container.store
        let finalRequest = request
        let result = try container.bridge.run { try await store.save(finalRequest) }

        for model in inserted.models {
            let data = model._$backingData
            let oldID = data.id
            data.storedValues = insertedValues[oldID] ?? [:]
            data.changedKeys = []
            data.state = .persisted
            if let existing = result.remappedIdentifiers[oldID] {
                // Upsert: the model is now the existing row.
                registry[oldID] = nil
                data.id = existing
                register(model)
            }
        }
        for model in changed.models {
            let data = model._$backingData
            for (key, value) in updatedValues[data.id] ?? [:] { data.storedValues[key] = value }
            data.changedKeys = []
        }
        for model in deleted.models {
            registry[model._$backingData.id] = nil
            model._$backingData.changedKeys = []
        }
        inserted = OrderedModels()
        changed = OrderedModels()
        deleted = OrderedModels()
        lastAutosaveError = nil
    }

    /// Discards every pending change: inserts are forgotten, changed properties get their stored values
    /// back, deletes are undone.
    public func rollback() {
        pendingError = nil
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
        registry[persistentModelID.id]?.model as? T
    }

    /// The model for `persistentModelID`: the registered instance, or one fetched from the store.
    /// SwiftData returns a fault that crashes on access when the row is gone; PGModel throws `notFound`.
    public func model(for persistentModelID: PersistentIdentifier) throws -> any PersistentModel {
        if let model = registry[persistentModelID.id]?.model { return model }
        guard let entity = container.schema.entity(named: persistentModelID.entityName) else {
            throw PGModelError(.unknownEntity, "\(persistentModelID.entityName) is not in this container's schema", model: persistentModelID.entityName)
        }
        let request = FetchRequest(entity: entity.name, identifiers: [persistentModelID.id])
        let store = container.store
        let rows = try container.bridge.run { try await store.fetch(request) }
        guard let row = rows.first else {
            throw PGModelError(.notFound, "no \(entity.name) with id \(persistentModelID.id.uuidString.lowercased()) exists", model: entity.name)
        }
        return try materializeAny(row, as: entity.type)
    }

    // MARK: Internals

    private var pendingError: PGModelError?

    func modelDidChange(_ model: any PersistentModel) {
        let data = model._$backingData
        guard data.context === self, data.state == .persisted else { return }
        changed.add(model, id: data.id)
        scheduleAutosave()
    }

    func register(_ model: any PersistentModel) {
        registry[model._$backingData.id] = WeakModel(model)
    }

    func registered(_ id: UUID) -> (any PersistentModel)? {
        registry[id]?.model
    }

    private func undelete(_ model: any PersistentModel) {
        let data = model._$backingData
        deleted.remove(data.id)
        data.state = data.stateBeforeDelete == .detached ? .inserted : data.stateBeforeDelete
        if data.state == .inserted { inserted.add(model, id: data.id) }
        register(model)
    }

    private func storedValues(of model: any PersistentModel, in schema: Schema, keys: Set<String>?) throws -> [String: PGValue] {
        let type = Swift.type(of: model)
        guard let entity = schema.entity(for: type) else {
            throw PGModelError(.unknownEntity, "\(type._$entityName) is not in this container's schema; add it to the ModelContainer", model: type._$entityName)
        }
        var values: [String: PGValue] = [:]
        for property in entity.properties where keys == nil || keys?.contains(property.name) == true {
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
        for property in entity.properties where data.changedKeys.contains(property.name) {
            if let stored = data.storedValues[property.name] {
                try? property.write(model, stored)
            }
        }
        data.changedKeys = []
    }

    /// Applies a fresh row to a registered model that has no unsaved changes, so fetches show what other
    /// contexts saved; a model with unsaved changes keeps them.
    func refresh(_ model: any PersistentModel, with row: FetchedRow, entity: Schema.Entity) {
        let data = model._$backingData
        guard data.changedKeys.isEmpty, data.state == .persisted else { return }
        data.isApplyingStoredValues = true
        defer { data.isApplyingStoredValues = false }
        for property in entity.properties {
            guard let value = row.values[property.name], data.storedValues[property.name] != value else { continue }
            try? property.write(model, value)
        }
        data.storedValues = row.values
    }

    func materialize<T: PersistentModel>(_ row: FetchedRow, as type: T.Type) throws -> T {
        if let existing = registry[row.id]?.model {
            guard let typed = existing as? T else {
                throw PGModelError(.typeMismatch, "row \(row.id) is registered as \(Swift.type(of: existing)), not \(T.self)", model: T._$entityName)
            }
            if let entity = container.schema.entity(for: T.self) { refresh(typed, with: row, entity: entity) }
            return typed
        }
        let model = try T(backingData: ModelBackingData(row: row))
        model._$backingData.context = self
        register(model)
        return model
    }

    func materializeAny(_ row: FetchedRow, as type: any PersistentModel.Type) throws -> any PersistentModel {
        try materialize(row, as: type)
    }

    func pendingModels(of entityName: String) -> (inserted: [any PersistentModel], changed: [any PersistentModel], deleted: Set<UUID>) {
        (inserted.models.filter { Swift.type(of: $0)._$entityName == entityName },
         changed.models.filter { Swift.type(of: $0)._$entityName == entityName },
         Set(deleted.models.filter { Swift.type(of: $0)._$entityName == entityName }.map { $0._$backingData.id }))
    }

    private func scheduleAutosave() {
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

/// Models in insertion order, with O(1) lookup by id.
struct OrderedModels {
    private(set) var models: [any PersistentModel] = []
    private var index: [UUID: Int] = [:]

    var isEmpty: Bool { models.isEmpty }

    mutating func add(_ model: any PersistentModel, id: UUID) {
        guard index[id] == nil else { return }
        index[id] = models.count
        models.append(model)
    }

    mutating func remove(_ id: UUID) {
        guard let position = index.removeValue(forKey: id) else { return }
        models.remove(at: position)
        for (key, value) in index where value > position { index[key] = value - 1 }
    }
}
