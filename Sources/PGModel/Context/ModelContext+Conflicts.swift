import Foundation
@_spi(PGModelInternals) import PGModelCore

/// Concurrent edits: what a save tells the store about the values this context read, and how the context
/// takes the store's values back.
extension ModelContext {
    /// The values this context read of `keys` (the ancestor a save compares with what it replaces):
    /// those it holds, not faults. Nil when it holds none.
    func ancestor<Keys: Sequence<String>>(of model: any PersistentModel, keys: Keys) -> [String: PGValue]? {
        let data = model._$backingData
        var read: [String: PGValue] = [:]
        for key in keys where !data.faults.contains(key) {
            if let value = data.storedValues[key] { read[key] = value }
        }
        return read.isEmpty ? nil : read
    }

    /// Adds the `@Attribute(.merge(…))` rules of `model`'s class to `request`, once per class.
    func addMergeRules(of model: any PersistentModel, to request: inout SaveRequest) {
        let name = type(of: model)._$entityName
        guard request.mergeRules[name] == nil else { return }
        let rules = ModelGraph.entity(for: type(of: model)).mergeRules
        if !rules.isEmpty { request.mergeRules[name] = rules }
    }

    /// Shows the values a save stored for a registered model instead of those this context sent.
    func applyStoredValues(_ row: RowValues) {
        guard let model = registered(row.id) else { return }
        let data = model._$backingData
        let entity = ModelGraph.entity(for: type(of: model))
        data.isApplyingStoredValues = true
        defer { data.isApplyingStoredValues = false }
        row.forEachValue { key, value in
            data.storedValues[key] = value
            // A change the app made while an async save was in flight stays the app's.
            guard !data.changedKeys.contains(key), let property = entity.property(named: key) else { return }
            if let relationship = property.relationship {
                // The store kept another partner: it loads on next access.
                if relationship.isOptional { try? relationship.assign(model, []) }
                data.faults.insert(key)
                return
            }
            try? property.write(model, value)
            data.faults.remove(key)
        }
    }

    /// Takes the rows a save updated, whole as it left them (``SaveResult/stored``), as what each registered
    /// model shows and what this context read of it: attributes and to-one relationships someone else
    /// changed show now, without a fetch, and the next save compares with these values. A value equal (as
    /// stored) to the one the context holds is left as it is, so a model's own values are not replaced by
    /// the store's copy of them. A property the app changed while an async save was in flight keeps the
    /// app's value; only what the context read moves on.
    func applyStoredRows(_ table: FetchedTable) {
        guard !table.rows.isEmpty else { return }
        let schema = container.schema.schemaDescription
        // Each shape's property types, worked out once: a save of many rows of a class has one shape.
        let types: [[AttributeType?]] = table.shapes.map { shape in
            guard let entity = schema.entity(named: shape.entity) else { return shape.keys.map { _ in nil } }
            return shape.keys.map { key in
                if let attribute = entity.attribute(named: key) { return attribute.type }
                return entity.relationship(named: key).map { _ in AttributeType.uuid }
            }
        }
        for row in table.rows {
            guard row.shape >= 0, row.shape < table.shapes.count, let model = registered(row.id) else { continue }
            let shape = table.shapes[row.shape]
            guard type(of: model)._$entityName == shape.entity, row.values.count == shape.keys.count else { continue }
            let data = model._$backingData
            let entity = ModelGraph.entity(for: type(of: model))
            data.isApplyingStoredValues = true
            defer { data.isApplyingStoredValues = false }
            for (i, key) in shape.keys.enumerated() {
                guard let type = types[row.shape][i] else { continue }
                let value = row.values[i]
                let was = data.storedValues[key]
                if let was, value.isStoredEquivalent(to: was, as: type), !data.faults.contains(key) { continue }
                data.storedValues[key] = value
                // A change the app made while an async save was in flight stays the app's.
                guard !data.changedKeys.contains(key), let property = entity.property(named: key) else { continue }
                if let relationship = property.relationship {
                    // Another partner now (or a fault not loaded yet): it loads on next access.
                    if relationship.isOptional { try? relationship.assign(model, []) }
                    data.faults.insert(key)
                    continue
                }
                try? property.write(model, value)
                data.faults.remove(key)
            }
        }
    }

    /// Reads `model` again from the store, as Core Data's `refresh(_:mergeChanges:)` does: what this
    /// context read becomes what is stored now, so the next save compares with it. With `mergeChanges`
    /// the model keeps its unsaved changes (a save then writes them over the store's values, on
    /// purpose); without, it drops them and shows the store's values. The way on after a
    /// `save_conflict`:
    ///
    /// ```swift
    /// do { try context.save() }
    /// catch let error as PGModelError where error.code == .saveConflict {
    ///     for conflict in error.conflicts {
    ///         if let trip: Trip = context.registeredModel(for: conflict.persistentModelID(for: Trip.self)) {
    ///             try context.refresh(trip, mergeChanges: true)   // keep mine, knowing theirs
    ///         }
    ///     }
    ///     try context.save()
    /// }
    /// ```
    ///
    /// A model whose row is gone (deleted by someone else) is deleted in this context too. An inserted
    /// model that was never saved has nothing to read: it is left as it is.
    public func refresh(_ model: some PersistentModel, mergeChanges: Bool) throws {
        let data = model._$backingData
        guard data.context === self, data.state == .persisted || data.state == .deleted else { return }
        let entity = ModelGraph.entity(for: type(of: model))
        guard let row = try storeRows(FetchRequest(entity: entity.name, identifiers: [data.id])).first else {
            changed.remove(data.id)
            deleted.remove(data.id)
            data.changedKeys = []
            forgetDeleted([data.id])
            return
        }
        mutationCount &+= 1
        if !mergeChanges {
            if data.state == .deleted {
                deleted.remove(data.id)
                data.state = .persisted
            }
            changed.remove(data.id)
            data.changedKeys = []
        }
        data.isApplyingStoredValues = true
        defer { data.isApplyingStoredValues = false }
        for property in entity.propertyMetadata {
            guard let value = row.values[property.name] else { continue }
            let was = data.storedValues[property.name]
            data.storedValues[property.name] = value
            guard !data.changedKeys.contains(property.name) else { continue }
            if let relationship = property.relationship {
                guard was != value else { continue }
                if relationship.isOptional { try? relationship.assign(model, []) }
                data.faults.insert(property.name)
                continue
            }
            try property.write(model, value)
            data.faults.remove(property.name)
        }
    }
}

extension SaveConflict {
    /// The conflicting model's identifier, to find it with `registeredModel(for:)` or `model(for:)`.
    ///
    /// ```swift
    /// let trip: Trip? = context.registeredModel(for: conflict.persistentModelID(for: Trip.self))
    /// ```
    public func persistentModelID<T: PersistentModel>(for type: T.Type) -> PersistentIdentifier {
        PersistentIdentifier(entityName: entity, id: id)
    }
}
