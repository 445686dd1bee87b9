import Foundation
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres

/// Relationships inside a context: faults, prefetching, the inserted graph, links and delete cleanup.
extension ModelContext {
    /// Runs one store request; every round trip goes through here so tests can count them.
    func roundTrip<R: Sendable>(_ body: @escaping @Sendable () async throws -> R) throws -> R {
        storeRoundTrips += 1
        return try container.bridge.run(body)
    }

    /// Inserts `model` and every detached model its loaded relationships reach.
    func insertModel(_ model: any PersistentModel) {
        insert(model)
    }

    /// The storage of relationship `name` of `entity`.
    func storage(of name: String, in entity: Schema.Entity) -> (RelationshipDescription, RelationshipStorage)? {
        guard let description = container.schema.entity(named: entity.name)?.relationshipDescription(named: name)
            ?? entity.relationshipDescription(named: name) else { return nil }
        let schema = container.schema.schemaDescription
        return (description, schema.storage(of: description, in: entity.entityDescription))
    }

    /// The registered model for a row id, or the row fetched as its concrete class.
    func model(forRowID id: UUID, declaredType: any PersistentModel.Type) throws -> any PersistentModel {
        if let model = registered(id) { return model }
        if let row = stagedRows.removeValue(forKey: id) { return try materializeConcrete(row) }
        let request = FetchRequest(entity: declaredType._$entityName, identifiers: [id])
        guard let row = try storeRows(request).first else {
            throw PGModelError(.notFound, "no \(declaredType._$entityName) with id \(id.uuidString.lowercased()) exists", model: declaredType._$entityName)
        }
        return try materializeConcrete(row)
    }

    /// Loads relationship `key` of `model` (a fault) with one query — none when a to-one's model is
    /// registered already. A failure leaves the placeholder (`nil`, `[]`) and is kept in `lastFaultError`.
    func loadRelationship(_ key: String, of model: any PersistentModel) {
        do {
            if let property = ModelGraph.entity(for: type(of: model)).property(named: key), !property.isRelationship {
                try loadAttributes(of: model)
                return
            }
            try loadRelationships(key, of: [model])
        } catch let error as PGModelError {
            lastFaultError = error
        } catch {
            lastFaultError = PGModelError(.internalError, "loading '\(key)' failed: \(type(of: error))")
        }
    }

    /// Loads every attribute `propertiesToFetch` left out of `model`, with one query.
    func loadAttributes(of model: any PersistentModel) throws {
        let data = model._$backingData
        let entity = ModelGraph.entity(for: type(of: model))
        let missing = entity.attributeMetadata.filter { data.faults.contains($0.name) || data.storedValues[$0.name] == nil }
        for property in missing { data.faults.remove(property.name) }
        guard !missing.isEmpty else { return }
        let request = FetchRequest(entity: entity.name, identifiers: [data.id], properties: missing.map(\.name))
        guard let row = try storeRows(request).first else {
            throw PGModelError(.notFound, "the \(entity.name) being loaded no longer exists", model: entity.name)
        }
        let wasApplying = data.isApplyingStoredValues
        data.isApplyingStoredValues = true
        defer { data.isApplyingStoredValues = wasApplying }
        for property in missing {
            guard let value = row.values[property.name] else { continue }
            data.storedValues[property.name] = value
            // A property the app changed meanwhile keeps the app's value.
            if !data.changedKeys.contains(property.name) { try property.write(model, value) }
        }
    }

    /// Loads relationship `key` for all of `models` at once: one query for the lot. The models may be
    /// of several classes of one hierarchy (a deep fetch of `Trip` returns `BusinessTrip`s too): they
    /// share the relationship's storage, so the query goes through the class that declares it, and each
    /// model is assigned through the accessor of its own class.
    func loadRelationships(_ key: String, of models: [any PersistentModel]) throws {
        guard let load = try relationshipLoad(key, of: models) else { return }
        let rows = try load.request.map { try fetchRows($0) } ?? []
        try apply(load, rows: rows)
    }

    /// The query that loads relationship `key` for `models` (nil when there is nothing to load), and
    /// what ``apply(_:rows:)`` needs to assign its rows. Marks the relationship loaded.
    func relationshipLoad(_ key: String, of models: [any PersistentModel]) throws -> RelationshipLoad? {
        guard let first = models.first else { return nil }
        let entity = declaringEntity(of: key, from: type(of: first))
        guard entity.property(named: key)?.relationship != nil,
              let (description, storage) = storage(of: key, in: entity) else { return nil }
        var relationships: [Schema.RelationshipMetadata] = []
        relationships.reserveCapacity(models.count)
        for model in models {
            let own = ModelGraph.entity(for: type(of: model))
            guard let relationship = own.property(named: key)?.relationship else {
                throw PGModelError(.invalidField, "\(own.name) has no relationship '\(key)'", model: own.name, keyPath: key)
            }
            relationships.append(relationship)
        }
        for model in models { model._$backingData.faults.remove(key) }
        var load = RelationshipLoad(key: key, models: models, relationships: relationships, description: description, storage: storage)
        if case .foreignKey = storage {
            var missing: [UUID] = []
            for model in models {
                guard case .uuid(let id)? = model._$backingData.storedValues[key] else { continue }
                load.wanted[model._$backingData.id] = id
                // Registered models are held weakly: keep the found ones alive until they are assigned.
                if load.loaded[id] == nil, !missing.contains(id) {
                    if let model = registered(id) { load.loaded[id] = model } else { missing.append(id) }
                }
            }
            if !missing.isEmpty { load.request = FetchRequest(entity: description.destination, identifiers: missing) }
        } else {
            let ids = models.map { $0._$backingData.id }
            load.request = FetchRequest(entity: description.destination, sort: [],
                                        related: RelatedScope(entity: entity.name, relationship: key, ids: ids))
        }
        return load
    }

    /// Assigns the rows of `load`'s query (empty when it had none) to its models.
    func apply(_ load: RelationshipLoad, rows: [StoreRow]) throws {
        defer { stagedRows = [:] }
        var related: [UUID: [any PersistentModel]] = [:]
        if case .foreignKey = load.storage {
            var loaded = load.loaded
            for row in rows { loaded[row.id] = try materializeConcrete(row) }
            for (source, target) in load.wanted {
                if let target = loaded[target] { related[source] = [target] }
            }
        } else {
            for row in rows {
                guard let via = row.via else { continue }
                let target = try materializeConcrete(row)
                if related[via]?.contains(where: { $0 === target }) != true { related[via, default: []].append(target) }
            }
        }
        let key = load.key
        for (model, relationship) in zip(load.models, load.relationships) {
            var targets = related[model._$backingData.id] ?? []
            if case .inverseForeignKey = load.storage, let inverse = load.description.inverse {
                // Unsaved changes win over the database: a registered model whose inverse now points
                // elsewhere is not here any more.
                targets = targets.filter { target in
                    guard target._$backingData.changedKeys.contains(inverse),
                          let back = ModelGraph.entity(for: type(of: target)).property(named: inverse)?.relationship else { return true }
                    return back.models(target).contains { $0 === model }
                }
            }
            if case .joinTable = load.storage {
                model._$backingData.storedLinks[key] = Set(targets.map { $0._$backingData.id })
            }
            let data = model._$backingData
            let wasApplying = data.isApplyingStoredValues
            data.isApplyingStoredValues = true
            defer { data.isApplyingStoredValues = wasApplying }
            if !relationship.isToMany && targets.isEmpty && !relationship.isOptional { continue }
            try relationship.assign(model, targets)
        }
    }

    /// Rows of `request`, with the partners their models' inits need staged (see ``stagePartners(of:)``).
    func fetchRows(_ request: FetchRequest) throws -> [StoreRow] {
        let rows = try storeRows(request)
        var frontier = rows
        while true {
            let requests = partnerRequests(for: frontier)
            if requests.isEmpty { break }
            frontier = []
            for partnerRequest in requests {
                let partners = try storeRows(partnerRequest)
                stage(partners)
                frontier += partners
            }
        }
        return rows
    }

    /// The rows of `request` as the store returns them, positionally (one round trip, no partners).
    func storeRows(_ request: FetchRequest) throws -> [StoreRow] {
        let store = container.store
        return try StoreRow.rows(of: roundTrip { try await store.fetchTable(request) })
    }

    /// The queries for partners that building `rows` would load one by one: a non-optional to-one cannot
    /// be a fault, so a model's init loads it. Fetching them first, one query per class, turns N round
    /// trips into one, and lets an async fetch build its models without blocking.
    func partnerRequests(for rows: [StoreRow]) -> [FetchRequest] {
        // Most schemas have no required to-one: then no row needs looking at (looking copies each row).
        guard container.schema.hasRequiredToOne else { return [] }
        var required: [String: [(name: String, destination: String)]] = [:]
        var wanted: [String: [UUID]] = [:]
        var seen = Set<UUID>()
        // Rows of one class usually come in runs: the last class's keys are tried before hashing its name.
        var last: (entity: String, keys: [(name: String, destination: String)])?
        for row in rows {
            let keys: [(name: String, destination: String)]
            if let last, last.entity == row.entity {
                keys = last.keys
            } else if let known = required[row.entity] {
                keys = known
            } else {
                var found: [(name: String, destination: String)] = []
                if let entity = container.schema.entity(named: row.entity) {
                    for property in entity.propertyMetadata {
                        guard let relationship = property.relationship, !relationship.isToMany, !relationship.isOptional,
                              let description = entity.relationshipDescription(named: property.name) else { continue }
                        found.append((property.name, description.destination))
                    }
                }
                required[row.entity] = found
                keys = found
            }
            last = (row.entity, keys)
            for key in keys {
                guard case .uuid(let id)? = row.values[key.name], registered(id) == nil, stagedRows[id] == nil,
                      seen.insert(id).inserted else { continue }
                wanted[key.destination, default: []].append(id)
            }
        }
        return wanted.keys.sorted().map { FetchRequest(entity: $0, identifiers: wanted[$0] ?? []) }
    }

    /// Keeps fetched partner rows until a model's init asks for them (``model(forRowID:declaredType:)``).
    func stage(_ rows: [StoreRow]) {
        for row in rows { stagedRows[row.id] = row }
    }

    /// The entity of the class that declares relationship `key`: `type`'s own, or that of the highest
    /// ancestor that still has it. Every class of a hierarchy reaches the relationship's rows through it.
    func declaringEntity(of key: String, from type: any PersistentModel.Type) -> Schema.Entity {
        var declaring = type
        while let parent = declaring._$superentity, ModelGraph.entity(for: parent).property(named: key) != nil {
            declaring = parent
        }
        return ModelGraph.entity(for: declaring)
    }

    /// The load that prefetches `keyPath` for `models`, whatever mix of classes they are; nil when
    /// none of them still has it as a fault.
    func prefetchLoad<T: PersistentModel>(_ keyPath: PartialKeyPath<T>, for models: [T]) throws -> RelationshipLoad? {
        // The key path is rooted at `T`; a subclass's own metadata knows it only by name.
        let entity = ModelGraph.entity(for: T.self)
        guard let property = entity.property(for: keyPath), property.isRelationship else {
            throw PGModelError(.invalidField, "relationshipKeyPathsForPrefetching of \(T._$entityName) names something that is not a relationship", model: T._$entityName)
        }
        let faulted: [any PersistentModel] = models.filter { $0._$backingData.faults.contains(property.name) }
        return try relationshipLoad(property.name, of: faulted)
    }

    /// Builds a fetched row as its concrete class (a fetch of `Trip` returns `BusinessTrip`s as such).
    func materializeConcrete(_ row: StoreRow, _ materialization: RowMaterialization = .standard) throws -> any PersistentModel {
        // A fetch's rows are mostly of one class: its name compares equal without hashing.
        if let last = caches.lastConcreteClass, last.name == row.entity {
            return try materializeAny(row, as: last.type, materialization)
        }
        guard let entity = container.schema.entity(named: row.entity) else {
            throw PGModelError(.unknownEntity, "the store returned a \(row.entity), which is not in this container's schema", model: row.entity)
        }
        caches.lastConcreteClass = (entity.name, entity.type)
        return try materializeAny(row, as: entity.type, materialization)
    }

    /// Inserts every detached model reachable through loaded relationships of pending models.
    func insertReachableGraph() {
        var frontier = inserted.models + changed.models
        var visited = Set<ObjectIdentifier>()
        var classes = RelationshipsByClass()
        while let model = frontier.popLast() {
            // A model of a class without relationships reaches nothing (most of a bulk insert).
            let relationships = classes.relationships(of: model)
            guard !relationships.isEmpty, visited.insert(ObjectIdentifier(model)).inserted else { continue }
            let data = model._$backingData
            for property in relationships where !data.faults.contains(property.name) {
                guard let relationship = property.relationship else { continue }
                for related in relationship.models(model) where related._$backingData.state == .detached {
                    insert(related)
                    frontier.append(related)
                }
            }
        }
    }

    /// Checks `minimumModelCount` / `maximumModelCount` and non-optional to-ones of pending models.
    func validateRelationshipCounts(skipping deletions: PendingDeletions? = nil) throws {
        var classes = RelationshipsByClass()
        for models in [inserted.models, changed.models] {
            for model in models where !classes.relationships(of: model).isEmpty && deletions?.contains(model) != true {
                try validateRelationshipCounts(of: model)
            }
        }
    }

    private func validateRelationshipCounts(of model: any PersistentModel) throws {
        let data = model._$backingData
        let entity = ModelGraph.entity(for: type(of: model))
        for property in entity.relationshipMetadata where !data.faults.contains(property.name) {
            guard let relationship = property.relationship,
                  data.state == .inserted || data.changedKeys.contains(property.name),
                  let description = entity.relationshipDescription(named: property.name) else { continue }
            let count = relationship.models(model).count
            if let minimum = description.minimumModelCount, count < minimum {
                throw PGModelError(.relationshipCount, "\(entity.name).\(property.name) holds \(count) models, fewer than its minimumModelCount \(minimum)", model: entity.name, keyPath: property.name)
            }
            if let maximum = description.maximumModelCount, count > maximum {
                throw PGModelError(.relationshipCount, "\(entity.name).\(property.name) holds \(count) models, more than its maximumModelCount \(maximum)", model: entity.name, keyPath: property.name)
            }
        }
    }

    /// Link changes of join-table relationships of `model` (all current links for an insert).
    func linkChanges(of model: any PersistentModel, isInsert: Bool) -> [LinkChange] {
        guard !caches.relationshipsOfLastClass.relationships(of: model).isEmpty else { return [] }
        let data = model._$backingData
        let entity = ModelGraph.entity(for: type(of: model))
        var changes: [LinkChange] = []
        for property in entity.relationshipMetadata where !data.faults.contains(property.name) {
            guard let relationship = property.relationship, relationship.isToMany,
                  isInsert || data.changedKeys.contains(property.name),
                  let (_, storage) = storage(of: property.name, in: entity), case .joinTable = storage else { continue }
            let current = Set(relationship.models(model).map { $0._$backingData.id })
            let stored = isInsert ? [] : (data.storedLinks[property.name] ?? [])
            for id in current.subtracting(stored).sorted(by: { $0.uuidString < $1.uuidString }) {
                changes.append(LinkChange(entity: entity.name, relationship: property.name, source: data.id, destination: id, isAdded: true))
            }
            for id in stored.subtracting(current).sorted(by: { $0.uuidString < $1.uuidString }) {
                changes.append(LinkChange(entity: entity.name, relationship: property.name, source: data.id, destination: id, isAdded: false))
            }
        }
        return changes
    }

    /// Remembers the links just saved, so the next save diffs against them.
    func recordSavedLinks(of model: any PersistentModel) {
        // Most classes of a bulk save have no relationships.
        guard !caches.relationshipsOfLastClass.relationships(of: model).isEmpty else { return }
        let data = model._$backingData
        let entity = ModelGraph.entity(for: type(of: model))
        for property in entity.relationshipMetadata where !data.faults.contains(property.name) {
            guard let relationship = property.relationship, relationship.isToMany,
                  let (_, storage) = storage(of: property.name, in: entity), case .joinTable = storage else { continue }
            data.storedLinks[property.name] = Set(relationship.models(model).map { $0._$backingData.id })
        }
    }

    /// After a save deleted `ids`: registered models drop every loaded reference to them, as the
    /// database did (`ON DELETE SET NULL`, join rows cascaded); cascaded models become deleted.
    func forgetDeleted(_ ids: Set<UUID>) {
        guard !ids.isEmpty else { return }
        for id in ids {
            if let model = registered(id) {
                model._$backingData.state = .deleted
                unregister(id)
            }
        }
        for model in registeredModels() {
            let data = model._$backingData
            for property in ModelGraph.entity(for: type(of: model)).relationshipMetadata where !data.faults.contains(property.name) {
                guard let relationship = property.relationship else { continue }
                let current = relationship.models(model)
                let kept = current.filter { !ids.contains($0._$backingData.id) }
                guard kept.count != current.count else { continue }
                data.isApplyingStoredValues = true
                if relationship.isToMany || relationship.isOptional { try? relationship.assign(model, kept) }
                data.isApplyingStoredValues = false
                if !relationship.isToMany { data.storedValues[property.name] = .null }
                if data.storedLinks[property.name] != nil { data.storedLinks[property.name]?.subtract(ids) }
            }
        }
    }
}

/// A batched relationship load: its query and what assigning the rows needs.
struct RelationshipLoad {
    let key: String
    let models: [any PersistentModel]
    let relationships: [Schema.RelationshipMetadata]
    let description: RelationshipDescription
    let storage: RelationshipStorage
    /// The query to run; nil when every partner is registered already.
    var request: FetchRequest?
    /// Foreign-key storage: each model's partner id.
    var wanted: [UUID: UUID] = [:]
    /// Foreign-key storage: partners found registered (held strongly until assigned).
    var loaded: [UUID: any PersistentModel] = [:]
}

/// The relationships of each model's class, looked up once per run of models of one class: the graph
/// walks of a save visit every pending model, and ``ModelGraph/entity(for:)`` (a lock and a copy of the
/// entity) per model was a noticeable share of a bulk insert.
struct RelationshipsByClass {
    private var last: (type: ObjectIdentifier, relationships: [Schema.PropertyMetadata])?

    mutating func relationships(of model: any PersistentModel) -> [Schema.PropertyMetadata] {
        let type = Swift.type(of: model)
        if let last, last.type == ObjectIdentifier(type) { return last.relationships }
        let relationships = ModelGraph.entity(for: type).relationshipMetadata
        last = (ObjectIdentifier(type), relationships)
        return relationships
    }
}
