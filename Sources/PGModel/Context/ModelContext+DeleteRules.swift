import Foundation
@_spi(PGModelInternals) import PGModelCore

/// What a save deletes, worked out from the graph as the app left it when `save()` is called.
struct PendingDeletions {
    /// Stored models the save deletes: those the app deleted and those `.cascade` reaches from them.
    var stored: [any PersistentModel] = []
    /// Inserted models that go without ever being stored: deleted before their first save, or reached by
    /// `.cascade` from a deleted model.
    var unsaved: [any PersistentModel] = []
    /// The ids of both.
    var ids: Set<UUID> = []
    /// The members of both.
    var members: Set<ObjectIdentifier> = []

    func contains(_ model: any PersistentModel) -> Bool { members.contains(ObjectIdentifier(model)) }
}

/// Delete rules applied to the models in memory, as SwiftData applies them when it saves.
///
/// The store applies the rules too, to rows no model in the context holds; what the context holds wins
/// where the two differ: a child the app moved to another parent stays, a child moved to a deleted parent
/// goes, and a model inserted and deleted before its first save takes its `.cascade` relationships with it.
extension ModelContext {
    /// The models this save deletes, or nil when it deletes nothing. Throws `deleteDenied` when a `.deny`
    /// relationship of a deleted model still holds a model that stays.
    func pendingDeletions() throws -> PendingDeletions? {
        guard !deleted.isEmpty || !discardedInserts.isEmpty else { return nil }
        var result = PendingDeletions()
        var queue: [any PersistentModel] = []
        func add(_ model: any PersistentModel) {
            guard result.members.insert(ObjectIdentifier(model)).inserted else { return }
            let data = model._$backingData
            result.ids.insert(data.id)
            if data.state == .inserted || (data.state == .deleted && data.stateBeforeDelete == .detached) {
                result.unsaved.append(model)
            } else {
                result.stored.append(model)
            }
            queue.append(model)
        }
        for model in deleted.models { add(model) }
        for model in discardedInserts.models { add(model) }
        // The models this save writes: their relationships in memory may differ from the store's.
        let writers = inserted.models + changed.models
        var classes = RelationshipsByClass()
        while true {
            while let model = queue.popLast() {
                let data = model._$backingData
                let entity = ModelGraph.entity(for: type(of: model))
                for property in classes.relationships(of: model) where !data.faults.contains(property.name) {
                    guard let relationship = property.relationship,
                          entity.relationshipDescription(named: property.name)?.deleteRule == .cascade else { continue }
                    for related in relationship.models(model) {
                        let state = related._$backingData.state
                        if state == .inserted || state == .persisted { add(related) }
                    }
                }
            }
            // A writer whose relationship reaches a deleted model through the inverse of a `.cascade`
            // relationship that is not loaded on the deleted model's side goes too.
            for model in writers where !result.contains(model) && model._$backingData.state != .deleted {
                if partner(of: model, in: result, through: .cascade, classes: &classes) != nil { add(model) }
            }
            if queue.isEmpty { break }
        }
        try checkDenyRules(result, writers: writers, classes: &classes)
        return result
    }

    /// A model in `deletions` that `model` reaches through a loaded relationship whose inverse has `rule`.
    private func partner(of model: any PersistentModel, in deletions: PendingDeletions, through rule: Schema.Relationship.DeleteRule,
                         classes: inout RelationshipsByClass) -> (property: String, target: any PersistentModel)? {
        let data = model._$backingData
        // The class's description only for a model that reaches a deleted one: most writers reach none.
        var entity: Schema.Entity?
        for property in classes.relationships(of: model) where !data.faults.contains(property.name) {
            guard let relationship = property.relationship else { continue }
            for target in relationship.models(model) where deletions.contains(target) {
                if entity == nil { entity = ModelGraph.entity(for: type(of: model)) }
                guard let inverse = entity?.relationshipDescription(named: property.name)?.inverse else { break }
                if ModelGraph.entity(for: type(of: target)).relationshipDescription(named: inverse)?.deleteRule == rule {
                    return (inverse, target)
                }
            }
        }
        return nil
    }

    /// Refuses the save when a deleted model's `.deny` relationship still holds a model that stays, as
    /// the store would; a model the app already let go of does not count.
    private func checkDenyRules(_ deletions: PendingDeletions, writers: [any PersistentModel], classes: inout RelationshipsByClass) throws {
        for model in deletions.stored + deletions.unsaved {
            let data = model._$backingData
            let entity = ModelGraph.entity(for: type(of: model))
            for property in classes.relationships(of: model) where !data.faults.contains(property.name) {
                guard let relationship = property.relationship,
                      let description = entity.relationshipDescription(named: property.name),
                      description.deleteRule == .deny else { continue }
                let staying = relationship.models(model).filter { !deletions.contains($0) && $0._$backingData.state != .deleted }
                if !staying.isEmpty { throw Self.denied(entity.name, property.name, staying.count, description.destination) }
            }
        }
        for model in writers where !deletions.contains(model) && model._$backingData.state != .deleted {
            if let (property, target) = partner(of: model, in: deletions, through: .deny, classes: &classes) {
                let entity = ModelGraph.entity(for: type(of: target))
                throw Self.denied(entity.name, property, 1, type(of: model)._$entityName)
            }
        }
    }

    private static func denied(_ entity: String, _ relationship: String, _ count: Int, _ destination: String) -> PGModelError {
        PGModelError(.deleteDenied,
                     "cannot delete \(entity): its relationship '\(relationship)' (deleteRule .deny) still reaches \(count) \(destination)",
                     model: entity, keyPath: relationship)
    }

    /// `values` of `model` with every to-one reference to a model the save deletes set to NULL
    /// (`.nullify`): the row it named is gone, or never stored.
    func nullifyingDeleted(_ values: inout [String: PGValue], of model: any PersistentModel, _ deletions: PendingDeletions) {
        var entity: Schema.Entity?
        for (key, value) in values {
            guard case .uuid(let id) = value, deletions.ids.contains(id) else { continue }
            if entity == nil { entity = ModelGraph.entity(for: type(of: model)) }
            if entity?.property(named: key)?.isRelationship == true { values[key] = .null }
        }
    }

    /// ``nullifyingDeleted(_:of:_:)`` of an inserted row, which stays positional unless it names a deleted model.
    func nullifyingDeleted(_ row: inout RowValues, of model: any PersistentModel, _ deletions: PendingDeletions) {
        func isDeleted(_ value: PGValue) -> Bool {
            if case .uuid(let id) = value { return deletions.ids.contains(id) }
            return false
        }
        let refers = row.positionalValues.map { $0.values.contains(where: isDeleted) } ?? row.values.values.contains(where: isDeleted)
        guard refers else { return }
        var values = row.values
        nullifyingDeleted(&values, of: model, deletions)
        row.values = values
    }
}
