import PGModelCore

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

    /// The row id.
    public internal(set) var id: UUID
    /// The owning context.
    public internal(set) weak var context: ModelContext?
    /// See ``State``.
    public internal(set) var state: State
    /// Properties set since the last save.
    public internal(set) var changedKeys: Set<String> = []
    /// The values the store holds, as of the last fetch or save; rollback restores them.
    var storedValues: [String: PGValue]
    /// The state before a pending delete, so rollback can restore it.
    var stateBeforeDelete: State = .detached
    /// While true, property writes are the store's own (fetch, rollback) and are not changes.
    var isApplyingStoredValues = false

    /// A new model's backing data with a fresh time-ordered id.
    public init() {
        self.id = UUID.v7()
        self.state = .detached
        self.storedValues = [:]
    }

    /// Backing data of a row read from the store.
    init(row: FetchedRow) {
        self.id = row.id
        self.state = .persisted
        self.storedValues = row.values
    }

    /// The stored value of `key`, converted by `codec`. Generated `init(backingData:)` calls it.
    public func value<Value>(forKey key: String, codec: AttributeCodec<Value>) throws -> Value {
        guard let stored = storedValues[key] else {
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

    func noteChange(_ key: String, of model: any PersistentModel) {
        // A detached model's every column is written at insert: its setters (Swift calls them in the
        // user's init for properties that already had a default) are not changes.
        guard !isApplyingStoredValues, state != .detached else { return }
        changedKeys.insert(key)
        if state == .persisted { context?.modelDidChange(model) }
    }
}
