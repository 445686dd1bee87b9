import Foundation

extension SchemaDescription {
    /// For each row a save inserts into a `.cascade` relationship of another record (the record then owns
    /// it, and a share of the record covers it), that record. The save says it in three ways: the new
    /// row's foreign key (`item.trip = trip`), the record's to-one (`trip.stay = stay`), or a link.
    ///
    /// ```swift
    /// let parents = schema.cascadeParents(in: save)   // [itemID: RowReference(entity: "Trip", id: tripID)]
    /// ```
    public func cascadeParents(in request: SaveRequest) -> [UUID: RowReference] {
        // Without a `.cascade` relationship nothing has a parent: no index of every inserted row (for a
        // large save, a dictionary as big as the request).
        guard !request.inserts.isEmpty, entities.contains(where: { $0.relationships.contains { $0.deleteRule == .cascade } }) else { return [:] }
        let inserted = Dictionary(request.inserts.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var parents: [UUID: RowReference] = [:]
        for parent in entities {
            for relationship in parent.relationships where relationship.deleteRule == .cascade {
                let children = Set(entityNames(inHierarchyOf: relationship.destination))
                switch storage(of: relationship, in: parent) {
                case .inverseForeignKey:
                    guard let inverse = relationship.inverse else { continue }
                    for row in request.inserts where children.contains(row.entity) && parents[row.id] == nil {
                        // A parent inserted by the same save must be of the parent's class.
                        if let id = Self.reference(row[inverse]),
                           inserted[id].map({ entityNames(inHierarchyOf: parent.name).contains($0.entity) }) ?? true {
                            parents[row.id] = RowReference(entity: parent.name, id: id)
                        }
                    }
                case .foreignKey:
                    for row in request.inserts + request.updates where row.entity == parent.name {
                        if let child = Self.reference(row[relationship.name]), inserted[child] != nil, parents[child] == nil {
                            parents[child] = RowReference(entity: parent.name, id: row.id)
                        }
                    }
                case .joinTable:
                    for link in request.links where link.isAdded {
                        if link.entity == parent.name, link.relationship == relationship.name, inserted[link.destination] != nil {
                            if parents[link.destination] == nil { parents[link.destination] = RowReference(entity: parent.name, id: link.source) }
                        } else if let inverse = relationship.inverse, children.contains(link.entity), link.relationship == inverse,
                                  inserted[link.source] != nil, parents[link.source] == nil {
                            parents[link.source] = RowReference(entity: parent.name, id: link.destination)
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
