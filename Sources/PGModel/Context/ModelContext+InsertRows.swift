import Foundation
@_spi(PGModelInternals) import PGModelCore

/// The rows a save inserts, built positionally: one array of values per model, their names shared by
/// every model of the class (``RowKeys`` for the request, ``StoredKeys`` for the snapshot). The saved
/// model's snapshot is the very array the request sent, so a save of many new models keeps one array
/// per model, not a dictionary of hashed names (and not two copies).
extension ModelContext {
    /// What an insert stores of one model class: its stored properties, in declaration order.
    final class InsertShape {
        let rowKeys: RowKeys
        let storedKeys: StoredKeys
        /// The stored properties; `isForeignKey[i]` tells a to-one kept as a foreign key from an attribute.
        let properties: [Schema.PropertyMetadata]
        let isForeignKey: [Bool]
        /// How each property is read: only this, not a copy of each ``Schema/PropertyMetadata`` (its
        /// strings and closures) per property and model.
        let accesses: [any PropertyAccess]
        let entityName: String
        /// For each of the class's persisted properties in declaration order (`schemaMetadata`), its
        /// position in the row, or -1: what ``_StoredValueReader`` fills.
        let readerSlots: [Int]
        /// The row positions the reader leaves to ``accesses``: transformed attributes.
        let slowPositions: [Int]

        init(properties: [Schema.PropertyMetadata], isForeignKey: [Bool], entityName: String, declared: [Schema.PropertyMetadata]) {
            let names = properties.map(\.name)
            self.rowKeys = RowKeys(names)
            self.storedKeys = StoredKeys(names)
            self.properties = properties
            self.isForeignKey = isForeignKey
            self.accesses = properties.map(\.access)
            self.entityName = entityName
            var position: [String: Int] = [:]
            for (i, name) in names.enumerated() where position[name] == nil { position[name] = i }
            var slow: [Int] = []
            var slots: [Int] = []
            for property in declared {
                // A name declared twice is read once, from its first declaration.
                guard let i = position.removeValue(forKey: property.name) else {
                    slots.append(-1)
                    continue
                }
                if property.metadata?.transformer != nil {
                    slow.append(i)
                    slots.append(-1)
                } else {
                    slots.append(i)
                }
            }
            // A row property the declarations do not name (none today) is read the slow way too.
            slow += position.values.sorted()
            self.readerSlots = slots
            self.slowPositions = slow
        }
    }

    /// The inserted row of `model` and the names of the snapshot it leaves once saved (``snapshot(of:keys:)``):
    /// every attribute, and every to-one stored as a foreign key (a faulted one keeps its stored value).
    /// The same values as `storedValues(of:in:keys: nil)`, by position.
    ///
    /// ```swift
    /// let (row, keys) = try context.insertedRow(of: trip, in: container.schema)
    /// row["name"]   // .string("Paris")
    /// ```
    func insertedRow(of model: any PersistentModel, in schema: Schema) throws -> (row: RowValues, snapshotKeys: StoredKeys) {
        let type = Swift.type(of: model)
        let shape = try insertShape(of: type, in: schema)
        let data = model._$backingData
        // The values straight from the properties' storage (a `@Model` class). Not for a model with
        // unloaded properties: their storage holds placeholders, which the accessors below load first.
        if data.faults.isEmpty, !shape.readerSlots.isEmpty {
            var reader = _StoredValueReader(slots: shape.readerSlots, count: shape.properties.count)
            model._$readStoredValues(into: &reader)
            // A class whose reader read every declared property (a `@Model` class does).
            if reader.position == shape.readerSlots.count {
                var values = reader.values
                for i in shape.slowPositions {
                    guard let value = shape.accesses[i].read(model) else {
                        throw PGModelError(.internalError, "property '\(shape.rowKeys.names[i])' of \(shape.entityName) could not be read",
                                           model: shape.entityName, keyPath: shape.rowKeys.names[i])
                    }
                    values[i] = value
                }
                return (RowValues(entity: shape.entityName, id: data.id, keys: shape.rowKeys, values: values), shape.storedKeys)
            }
        }
        var values: [PGValue] = []
        values.reserveCapacity(shape.properties.count)
        for (i, access) in shape.accesses.enumerated() {
            if shape.isForeignKey[i] {
                let name = shape.rowKeys.names[i]
                values.append(data.faults.contains(name) ? data.storedValues[name] ?? .null : access.read(model) ?? .null)
                continue
            }
            guard let value = access.read(model) else {
                throw PGModelError(.internalError, "property '\(shape.rowKeys.names[i])' of \(shape.entityName) could not be read",
                                   model: shape.entityName, keyPath: shape.rowKeys.names[i])
            }
            values.append(value)
        }
        return (RowValues(entity: shape.entityName, id: data.id, keys: shape.rowKeys, values: values), shape.storedKeys)
    }

    /// The snapshot a saved inserted row leaves: its very values, by the names `keys` gives its row's
    /// ``RowKeys`` (the request keeps the values; no second array of snapshots is held meanwhile).
    static func snapshot(of row: RowValues, keys: [ObjectIdentifier: StoredKeys]) -> StoredValues {
        guard let (rowKeys, values) = row.positionalValues, let storedKeys = keys[ObjectIdentifier(rowKeys)] else {
            return StoredValues(row.values)
        }
        return StoredValues(keys: storedKeys, values: values)
    }

    /// The ``InsertShape`` of `type`, worked out once per class and context.
    private func insertShape(of type: any PersistentModel.Type, in schema: Schema) throws -> InsertShape {
        if let known = caches.insertShapes[ObjectIdentifier(type)] { return known }
        guard let entity = schema.entity(for: type) else {
            throw PGModelError(.unknownEntity, "\(type._$entityName) is not in this container's schema; add it to the ModelContainer", model: type._$entityName)
        }
        var properties: [Schema.PropertyMetadata] = []
        var isForeignKey: [Bool] = []
        for property in entity.propertyMetadata where !property.isEphemeral {
            if let relationship = property.relationship {
                // To-many links are saved as join rows or as the other side's key.
                guard !relationship.isToMany, let (_, storage) = self.storage(of: property.name, in: entity),
                      case .foreignKey = storage else { continue }
                properties.append(property)
                isForeignKey.append(true)
            } else {
                properties.append(property)
                isForeignKey.append(false)
            }
        }
        let shape = InsertShape(properties: properties, isForeignKey: isForeignKey, entityName: type._$entityName,
                                declared: type.schemaMetadata)
        caches.insertShapes[ObjectIdentifier(type)] = shape
        return shape
    }
}
