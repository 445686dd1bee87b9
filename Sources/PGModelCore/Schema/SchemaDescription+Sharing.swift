import Foundation

@_spi(PGModelInternals) extension SchemaDescription {
    /// For each row a save inserts into a `.cascade` relationship of another record (the record then owns
    /// it, and a share of the record covers it), that record. The save says it in three ways: the new
    /// row's foreign key (`item.trip = trip`), the record's to-one (`trip.stay = stay`), or a link.
    ///
    /// ```swift
    /// let parents = schema.cascadeParents(in: save)   // [RowKey(root: "Item", id: itemID): RowReference(entity: "Trip", id: tripID)]
    /// ```
    public func cascadeParents(in request: SaveRequest) -> [RowKey: RowReference] {
        // Without a `.cascade` relationship nothing has a parent: no index of every inserted row (for a
        // large save, a dictionary as big as the request).
        guard !request.inserts.isEmpty, entities.contains(where: { $0.relationships.contains { $0.deleteRule == .cascade } }) else { return [:] }
        // Keyed by hierarchy and id: ids may repeat across hierarchies, so a child may have its parent's id.
        let key = rowKeyer()
        let inserted = Dictionary(request.inserts.map { (key($0.entity, $0.id), $0) }, uniquingKeysWith: { first, _ in first })
        var parents: [RowKey: RowReference] = [:]
        for parent in entities {
            for relationship in parent.relationships where relationship.deleteRule == .cascade {
                let children = Set(entityNames(inHierarchyOf: relationship.destination))
                switch storage(of: relationship, in: parent) {
                case .inverseForeignKey:
                    guard let inverse = relationship.inverse else { continue }
                    for row in request.inserts where children.contains(row.entity) {
                        let child = key(row.entity, row.id)
                        // A parent inserted by the same save must be of the parent's class.
                        if parents[child] == nil, let id = Self.reference(row[inverse]),
                           inserted[key(parent.name, id)].map({ entityNames(inHierarchyOf: parent.name).contains($0.entity) }) ?? true {
                            parents[child] = RowReference(entity: parent.name, id: id)
                        }
                    }
                case .foreignKey:
                    for row in request.inserts + request.updates where row.entity == parent.name {
                        if let id = Self.reference(row[relationship.name]) {
                            let child = key(relationship.destination, id)
                            if inserted[child] != nil, parents[child] == nil { parents[child] = RowReference(entity: parent.name, id: row.id) }
                        }
                    }
                case .joinTable:
                    for link in request.links where link.isAdded {
                        if link.entity == parent.name, link.relationship == relationship.name {
                            let child = key(relationship.destination, link.destination)
                            if inserted[child] != nil, parents[child] == nil { parents[child] = RowReference(entity: parent.name, id: link.source) }
                        } else if let inverse = relationship.inverse, children.contains(link.entity), link.relationship == inverse {
                            let child = key(link.entity, link.source)
                            if inserted[child] != nil, parents[child] == nil { parents[child] = RowReference(entity: parent.name, id: link.destination) }
                        }
                    }
                }
            }
        }
        return parents
    }

    /// `entities` and every class they own through `.cascade` relationships, transitively: what a
    /// share of a record of one of `entities` may make visible.
    ///
    /// ```swift
    /// schema.entitiesOwned(by: ["Trip"])   // ["Trip", "BucketListItem", "LivingAccommodation"]
    /// ```
    public func entitiesOwned(by roots: [String]) -> [String] {
        var result: [String] = []
        var frontier = roots
        while let name = frontier.popLast() {
            guard !result.contains(name), let entity = entity(named: name) else { continue }
            result.append(name)
            for relationship in entity.relationships where relationship.deleteRule == .cascade {
                frontier.append(contentsOf: entityNames(inHierarchyOf: relationship.destination))
            }
            frontier.append(contentsOf: entityNames(inHierarchyOf: name).filter { $0 != name })
        }
        return result
    }

    private static func reference(_ value: PGValue?) -> UUID? {
        switch value {
        case .uuid(let id)?: id
        case .string(let text)?: UUID(uuidString: text)
        default: nil
        }
    }
}
