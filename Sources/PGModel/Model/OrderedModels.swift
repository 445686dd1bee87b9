import Foundation

/// Models in insertion order, with O(1) lookup by id, and removal in amortized O(1): each removal used to
/// renumber every later model, so deleting many unsaved inserts one by one was quadratic in their count.
///
/// ```swift
/// var inserted = OrderedModels()
/// inserted.add(trip, id: trip._$backingData.id)
/// inserted.remove(trip._$backingData.id)
/// inserted.models   // []
/// ```
struct OrderedModels {
    /// In insertion order, removed models included until the next compaction.
    private var storage: [any PersistentModel] = []
    /// The id each of ``storage`` was added with (a model's id may change later: an upsert remaps it).
    private var ids: [UUID] = []
    /// Where each model not removed is in ``storage``.
    private var index: [UUID: Int] = [:]
    /// Positions in ``storage`` of removed models, compacted away once they are an eighth of it.
    private var removed: Set<Int> = []

    var isEmpty: Bool { index.isEmpty }

    /// The models, in the order they were added.
    var models: [any PersistentModel] {
        guard !removed.isEmpty else { return storage }
        return storage.indices.lazy.filter { !removed.contains($0) }.map { storage[$0] }
    }

    mutating func add(_ model: any PersistentModel, id: UUID) {
        guard index[id] == nil else { return }
        index[id] = storage.count
        storage.append(model)
        ids.append(id)
    }

    mutating func remove(_ id: UUID) {
        guard let position = index.removeValue(forKey: id) else { return }
        removed.insert(position)
        if removed.count == storage.count {
            self = OrderedModels()
        } else if removed.count > 32, removed.count * 8 > storage.count {
            compact()
        }
    }

    /// Drops the removed models from ``storage`` and renumbers the rest: O(count), once per
    /// `count / 8` removals.
    private mutating func compact() {
        var keptModels: [any PersistentModel] = [], keptIDs: [UUID] = []
        keptModels.reserveCapacity(storage.count - removed.count)
        keptIDs.reserveCapacity(storage.count - removed.count)
        for position in storage.indices where !removed.contains(position) {
            index[ids[position]] = keptModels.count
            keptModels.append(storage[position])
            keptIDs.append(ids[position])
        }
        storage = keptModels
        ids = keptIDs
        removed = []
    }
}
