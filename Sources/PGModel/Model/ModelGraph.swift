import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModelCore

/// The entity of every model class used so far, built once per class: generated setters need a
/// relationship's inverse even for models that belong to no context (and so to no schema) yet.
enum ModelGraph {
    private static let cache = NIOLockedValueBox<[ObjectIdentifier: Schema.Entity]>([:])

    static func entity(for type: any PersistentModel.Type) -> Schema.Entity {
        if let entity = cache.withLockedValue({ $0[ObjectIdentifier(type)] }) { return entity }
        let entity = Schema.Entity(type)
        cache.withLockedValue { $0[ObjectIdentifier(type)] = entity }
        return entity
    }
}

/// Keeps both sides of a relationship in step when one side changes (SwiftData's automatic inverse).
enum RelationshipMaintenance {
    /// Adds `model` to `partner`'s relationship `key`.
    static func link(_ partner: any PersistentModel, _ key: String, to model: any PersistentModel) {
        let entity = ModelGraph.entity(for: type(of: partner))
        guard let relationship = entity.property(named: key)?.relationship else { return }
        adopt(partner, from: model)
        let current = relationship.models(partner)
        if relationship.isToMany {
            guard !current.contains(where: { $0 === model }) else { return }
            write(partner, relationship, current + [model], initiator: model)
        } else {
            guard current.first !== model else { return }
            write(partner, relationship, [model], initiator: model)
        }
    }

    /// Removes `model` from `partner`'s relationship `key`. A non-optional to-one keeps its value: it
    /// cannot be empty, and the next save either relinks it or reports the problem.
    static func unlink(_ partner: any PersistentModel, _ key: String, from model: any PersistentModel) {
        let entity = ModelGraph.entity(for: type(of: partner))
        guard let relationship = entity.property(named: key)?.relationship else { return }
        let current = relationship.models(partner)
        guard current.contains(where: { $0 === model }) else { return }
        if !relationship.isToMany && !relationship.isOptional { return }
        write(partner, relationship, current.filter { $0 !== model }, initiator: model)
    }

    private static func write(_ partner: any PersistentModel, _ relationship: Schema.RelationshipMetadata,
                              _ models: [any PersistentModel], initiator: any PersistentModel) {
        let data = partner._$backingData
        let previous = data.inverseInitiator
        data.inverseInitiator = initiator
        defer { data.inverseInitiator = previous }
        try? relationship.assign(partner, models)
    }

    /// A model linked to one in a context joins that context (SwiftData inserts the reachable graph).
    static func adopt(_ partner: any PersistentModel, from model: any PersistentModel) {
        guard partner._$backingData.state == .detached, let context = model._$backingData.context,
              model._$backingData.state != .detached else { return }
        context.insertModel(partner)
    }
}
