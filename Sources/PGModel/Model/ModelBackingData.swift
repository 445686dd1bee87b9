@_spi(PGModelInternals) import PGModelCore

/// Per-instance state behind a model: identity, the context it belongs to, which properties changed
/// since the last save, and the values last read from or written to the store.
///
/// `@Model` adds one to every model (`_$backingData`); you do not use it directly.
public final class ModelBackingData {
    /// Where a model stands relative to its context and the store.
    public enum State: Sendable {
        /// Created, not inserted into a context.
        case detached
        /// Inserted, not yet saved.
        case inserted
        /// Stored (fetched or saved).
        case persisted
        /// Deleted from its context.
        case deleted
    }

    /// The row id. A new model's is drawn on first use, not when its backing data is made (a clock read
    /// and random bytes a model that never needs its id would pay for).
    public internal(set) var id: UUID {
        get {
            if let assigned { return assigned }
            let drawn = UUID.v7()
            assigned = drawn
            return drawn
        }
        set { assigned = newValue }
    }
    private var assigned: UUID?
    /// The owning context.
    /// Held strongly, as a fetched model must be able to load its faults for as long as it lives; the
    /// context holds its clean models only weakly, so no cycle outlives a save.
    public internal(set) var context: ModelContext?
    /// See ``State``.
    public internal(set) var state: State
    /// Properties set since the last save.
    public internal(set) var changedKeys: Set<String> = []
    // `@exclusivity(unchecked)` on the state a fetched model's `init(backingData:)` reads, property by
    // property: Swift checks every access to a class's stored property at run time (a thread-local access
    // set), and those checks were a sixth of building a fetched model. No access to them can overlap
    // another: StoredValues' methods call nothing that reaches back into the backing data, and a backing
    // data is used on its context's isolation only.

    /// The values the store holds, as of the last fetch or save; rollback restores them.
    @exclusivity(unchecked) var storedValues: StoredValues
    /// Where the generated `init(backingData:)` is expected to read next (see ``StoredValues/value(forKey:cursor:)``).
    @exclusivity(unchecked) private var readCursor = 0
    /// The state before a pending delete, so rollback can restore it.
    var stateBeforeDelete: State = .detached
    /// Whether no save has written the model yet: created, inserted, or inserted and then deleted
    /// before a save (`PersistentIdentifier.isTemporary`). Deleting an unsaved insert records
    /// `.detached` as the state before the delete.
    var isUnsaved: Bool {
        switch state {
        case .detached, .inserted: true
        case .deleted: stateBeforeDelete != .persisted
        case .persisted: false
        }
    }
    /// While true, property writes are the store's own (fetch, rollback) and are not changes.
    var isApplyingStoredValues = false
    /// Built from a row read with `propertiesToFetch`: missing attributes are faults, not errors.
    var isPartial = false
    /// `.ephemeral` properties: never stored, they start from their type's neutral value.
    @exclusivity(unchecked) var ephemeralKeys: Set<String> = []
    /// `.transformable(by:)` properties: their stored `Data` is turned back into values by these.
    @exclusivity(unchecked) var transformers: [String: ValueTransformer.Type] = [:]
    /// Relationship properties not loaded yet: the first read loads them (a fault).
    var faults: Set<String> = []
    /// Whether any property is still a fault; generated getters test it before anything else.
    public var hasFaults: Bool { !faults.isEmpty }
    /// The destination ids of join-table relationships as of the last load or save, to diff links.
    var storedLinks: [String: Set<UUID>] = [:]
    /// Set while an inverse relationship is being updated on this model: the model whose change caused it.
    weak var inverseInitiator: (any PersistentModel)?

    /// A new model's backing data with a fresh time-ordered id.
    public init() {
        self.state = .detached
        self.storedValues = StoredValues()
    }

    /// Backing data of a row read from the store.
    init(row: StoreRow) {
        self.assigned = row.id
        self.state = .persisted
        self.storedValues = row.values
    }

    /// Backing data of a fetched row about to become a model of `context`: everything set here, in the
    /// initializer, rather than property by property afterwards (each a checked access).
    init(row: StoreRow, traits: StorageTraits, isPartial: Bool, context: ModelContext) {
        self.assigned = row.id
        self.state = .persisted
        self.storedValues = row.values
        self.ephemeralKeys = traits.ephemeralKeys
        self.transformers = traits.transformers
        self.isPartial = isPartial
        self.context = context
    }

    /// Backing data of a row given by name.
    convenience init(row: RowValues) {
        self.init(row: StoreRow(row))
    }

    /// The stored value of `key`, converted by `codec`. Generated `init(backingData:)` calls it.
    ///
    /// Inlinable, so the usual case (a plain stored value) is specialized in the model's module: an
    /// unspecialized generic call looks up the type metadata of `Value` on every property of every
    /// fetched row.
    @inlinable
    public func value<Value>(forKey key: String, codec: AttributeCodec<Value>) throws -> Value {
        if let stored = _plainStoredValue(forKey: key) {
            do {
                return try codec.decode(stored)
            } catch var error as PGModelError {
                error.keyPath = key
                throw error
            }
        }
        return try _unusualValue(forKey: key, codec: codec)
    }

    /// The stored value of `key` when it is an ordinary one, read as is; nil when the property is
    /// transformed or ephemeral, or the row has no value for it (``_unusualValue(forKey:codec:)``).
    @usableFromInline
    func _plainStoredValue(forKey key: String) -> PGValue? {
        // Most classes have neither transformed nor ephemeral properties: skip both lookups then.
        if !transformers.isEmpty, transformers[key] != nil { return nil }
        if !ephemeralKeys.isEmpty, ephemeralKeys.contains(key) { return nil }
        return storedValues.value(forKey: key, cursor: &readCursor)
    }

    /// ``value(forKey:codec:)`` of a transformed or ephemeral property, or of one the row lacks.
    @usableFromInline
    func _unusualValue<Value>(forKey key: String, codec: AttributeCodec<Value>) throws -> Value {
        if !transformers.isEmpty, let transformer = transformers[key] {
            return try Schema.PropertyMetadata.reverse(storedValues[key] ?? .null, with: transformer, as: Value.self, name: key)
        }
        if !ephemeralKeys.isEmpty, ephemeralKeys.contains(key) {
            if let placeholder = codec.placeholder { return placeholder }
            throw PGModelError(.typeMismatch, "the .ephemeral property '\(key)' has no neutral value to start from; make it optional", keyPath: key)
        }
        guard let stored = storedValues.value(forKey: key, cursor: &readCursor) else {
            // Left out by `propertiesToFetch`: a fault, loaded on first access.
            if isPartial, let placeholder = codec.placeholder {
                faults.insert(key)
                return placeholder
            }
            if codec.isOptional { return try codec.decode(.null) }
            throw PGModelError(.typeMismatch, "the store returned no value for non-optional property '\(key)'", keyPath: key)
        }
        do {
            return try codec.decode(stored)
        } catch var error as PGModelError {
            error.keyPath = key
            throw error
        }
    }

    /// The value of relationship `key` for a model being built from a row: a placeholder (`nil`, `[]`),
    /// and the key becomes a fault loaded on first access. A non-optional to-one cannot be a
    /// placeholder, so it is loaded now.
    public func value<Value>(forKey key: String, codec: RelationshipCodec<Value>) throws -> Value {
        if let placeholder = codec.make([]) {
            faults.insert(key)
            return placeholder
        }
        guard let context, case .uuid(let id)? = storedValues[key] else {
            throw PGModelError(.typeMismatch, "the store returned no \(codec.destination._$entityName) for non-optional relationship '\(key)'", keyPath: key)
        }
        let related = try context.model(forRowID: id, declaredType: codec.destination)
        guard let value = codec.make([related]) else {
            throw PGModelError(.typeMismatch, "relationship '\(key)' cannot hold a \(type(of: related))", keyPath: key)
        }
        return value
    }

    /// Loads fault `key` of `model` through its context; without a context the placeholder stays.
    public func resolveFault(_ key: String, of model: any PersistentModel) {
        guard faults.remove(key) != nil else { return }
        context?.loadRelationship(key, of: model)
    }

    func noteChange<Value>(_ key: String, of model: any PersistentModel, from oldValue: Value, to newValue: Value) {
        guard !isApplyingStoredValues else { return }
        noteChange(key, of: model)
        let entity = ModelGraph.entity(for: type(of: model))
        guard let property = entity.property(named: key), let relationship = property.relationship,
              let description = entity.relationshipDescription(named: key), let inverse = description.inverse,
              let old = relationship.modelsOfValue(oldValue), let new = relationship.modelsOfValue(newValue)
        else { return }
        let removed: [any PersistentModel], added: [any PersistentModel]
        if old.count < 16 || new.count < 16 {
            removed = old.filter { o in !new.contains { $0 === o } }
            added = new.filter { n in !old.contains { $0 === n } }
        } else {
            // Appending to a large to-many compares every member with every other otherwise.
            let oldMembers = Set(old.lazy.map { ObjectIdentifier($0) }), newMembers = Set(new.lazy.map { ObjectIdentifier($0) })
            removed = old.filter { !newMembers.contains(ObjectIdentifier($0)) }
            added = new.filter { !oldMembers.contains(ObjectIdentifier($0)) }
        }
        if let initiator = inverseInitiator {
            // This write keeps `initiator`'s change in step; only a to-one's previous partner still
            // needs to let go of this model.
            for partner in removed where partner !== initiator {
                RelationshipMaintenance.unlink(partner, inverse, from: model)
            }
            return
        }
        for partner in removed { RelationshipMaintenance.unlink(partner, inverse, from: model) }
        for partner in added { RelationshipMaintenance.link(partner, inverse, to: model) }
    }

    func noteChange(_ key: String, of model: any PersistentModel) {
        // A detached model's every column is written at insert: its setters (Swift calls them in the
        // user's init for properties that already had a default) are not changes.
        guard !isApplyingStoredValues, state != .detached else { return }
        context?.mutationCount &+= 1
        changedKeys.insert(key)
        if state == .persisted { context?.modelDidChange(model) }
    }
}
