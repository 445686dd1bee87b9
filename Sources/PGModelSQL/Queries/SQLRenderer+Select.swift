import Foundation
@_spi(PGModelInternals) import PGModelCore

/// Which columns a ``SQLRenderer/select(_:)`` returns and how each row maps back to values: cells
/// 0 and 1 are `id` and `entity`, then ``attributes``, then ``foreignKeys``, then (for related fetches) `via`.
/// A row fills `values` only with what its concrete class has (``fields(of:)``).
///
/// ```swift
/// let layout = try renderer.selectLayout(request)
/// for field in layout.fields(of: concreteEntity) { values[field.name] = decode(cells[field.index], field.type) }
/// ```
@_spi(PGModelInternals) public struct SelectLayout: Hashable, Sendable {
    /// One value of a row: its Swift name, its cell index, and its type (`.uuid` for a foreign key).
    public struct Field: Hashable, Sendable {
        public var name: String
        public var index: Int
        public var type: AttributeType
        /// A to-one relationship's foreign key rather than an attribute.
        public var isRelationship: Bool

        public init(name: String, index: Int, type: AttributeType, isRelationship: Bool) {
            self.name = name
            self.index = index
            self.type = type
            self.isRelationship = isRelationship
        }
    }

    /// The fetched entity.
    public var entity: String
    /// The attribute columns, after `id` and `entity`.
    public var attributes: [AttributeDescription]
    /// The foreign-key columns, after the attributes.
    public var foreignKeys: [String]
    /// The cell of `via` (the source row of a related fetch), if any.
    public var viaIndex: Int?
    /// Fields of each class the fetch can return.
    public var fieldsByEntity: [String: [Field]]

    /// The fields of a row whose `entity` is `concrete`; the fetched entity's for an unknown class.
    public func fields(of concrete: String) -> [Field] {
        fieldsByEntity[concrete] ?? fieldsByEntity[entity] ?? []
    }
}

@_spi(PGModelInternals) extension SQLRenderer {
    /// `SELECT id, entity, <columns of every class in the entity's subtree>, <foreign keys>[, via]` for
    /// `request`: every row the connection may see (row-level security filters a service user's). Subclass rows are included;
    /// a fetch of a subclass filters on `entity`.
    ///
    /// ```swift
    /// let s = try renderer.select(FetchRequest(entity: "Trip", limit: 10))
    /// ```
    public func select(_ request: FetchRequest) throws -> SQLStatement {
        try select(request, layout: try selectLayout(request))
    }

    /// ``select(_:)`` with the request's layout already worked out (``selectLayout(_:)``), for a caller
    /// that needs both.
    ///
    /// ```swift
    /// let layout = try renderer.selectLayout(request)
    /// let statement = try renderer.select(request, layout: layout)
    /// ```
    public func select(_ request: FetchRequest, layout: SelectLayout) throws -> SQLStatement {
        try renderQuery(request, page: true, lock: false) { alias, via in
            var columns = ["id", "entity"].map { Self.column($0, alias) }
            columns += layout.attributes.map { $0.type.selectExpression(Self.column($0.columnName, alias)) }
            columns += layout.foreignKeys.map { Self.column($0, alias) }
            if let via { columns.append(via) }
            return columns.joined(separator: ", ")
        }
    }

    /// The columns ``select(_:)`` returns for `request`, and which of them each class's rows use.
    public func selectLayout(_ request: FetchRequest) throws -> SelectLayout {
        let entity = try self.entity(request.entity)
        let classes = schema.entityNames(inHierarchyOf: entity.name).compactMap { schema.entity(named: $0) }
        if let properties = request.properties {
            for name in properties where !classes.contains(where: { $0.attribute(named: name) != nil || $0.relationship(named: name) != nil }) {
                throw PGModelError(.unknownAttribute, "\(entity.name) has no stored property '\(name)'", model: entity.name, keyPath: name)
            }
        }
        var attributes: [AttributeDescription] = []
        var foreignKeys: [String] = []
        for c in classes {
            for attribute in c.attributes where !attributes.contains(where: { $0.columnName == attribute.columnName }) {
                if let properties = request.properties, !properties.contains(attribute.name) { continue }
                attributes.append(attribute)
            }
        }
        for c in classes {
            for relationship in c.relationships {
                if case .foreignKey(let column) = schema.storage(of: relationship, in: c), !foreignKeys.contains(column) {
                    foreignKeys.append(column)
                }
            }
        }
        var fields: [String: [SelectLayout.Field]] = [:]
        for c in classes {
            var list: [SelectLayout.Field] = []
            for attribute in c.attributes {
                guard let i = attributes.firstIndex(where: { $0.columnName == attribute.columnName }) else { continue }
                list.append(.init(name: attribute.name, index: 2 + i, type: attribute.type, isRelationship: false))
            }
            for relationship in c.relationships {
                guard case .foreignKey(let column) = schema.storage(of: relationship, in: c),
                      let i = foreignKeys.firstIndex(of: column) else { continue }
                list.append(.init(name: relationship.name, index: 2 + attributes.count + i, type: .uuid, isRelationship: true))
            }
            fields[c.name] = list
        }
        return SelectLayout(entity: entity.name, attributes: attributes, foreignKeys: foreignKeys,
                            viaIndex: request.related == nil ? nil : 2 + attributes.count + foreignKeys.count, fieldsByEntity: fields)
    }

    /// `SELECT id, entity` for `request`, in its order (plus `via` for a related fetch).
    public func selectIdentifiers(_ request: FetchRequest) throws -> SQLStatement {
        return try renderQuery(request, page: true, lock: false) { alias, via in
            ([Self.column("id", alias), Self.column("entity", alias)] + (via.map { [$0] } ?? [])).joined(separator: ", ")
        }
    }

    /// `SELECT id, entity … FOR UPDATE` of the rows a batch delete (`delete(model:where:)`) removes,
    /// subclasses included, locked until the transaction ends.
    public func selectForDelete(_ request: FetchRequest) throws -> SQLStatement {
        return try renderQuery(request, page: true, lock: true) { alias, _ in
            "\(Self.column("id", alias)), \(Self.column("entity", alias))"
        }
    }

    /// `SELECT count(*)` of `request`; limit and offset count as SwiftData's `fetchCount` does.
    public func count(_ request: FetchRequest) throws -> SQLStatement {
        if request.limit == nil && request.offset == nil {
            return try renderQuery(request, page: false, lock: false) { _, _ in "count(*)" }
        }
        var s = try renderQuery(request, page: true, lock: false) { _, _ in "1" }
        s.sql = "SELECT count(*) FROM (" + s.sql + ") AS page"
        return s
    }

    /// The one query shape behind every select: FROM the hierarchy table (aliased `t0` when anything else
    /// is joined), the related scope, the subclass filter, the predicate, ids, order and page.
    private func renderQuery(_ request: FetchRequest, page: Bool, lock: Bool,
                             columns: (_ alias: String?, _ via: String?) -> String) throws -> SQLStatement {
        // Everything the rendering below assumes (keys resolve, casts are readable, lists and values are
        // in range) is checked first, so a hostile request is a coded error, never a trap.
        try request.validate(against: schema)
        let entity = try self.entity(request.entity)
        var b = SQLBuilder()
        let qualified = request.related != nil
            || request.predicate.map { needsQualification($0, in: entity) } ?? false
            || request.sort.contains { Naming.isDotted($0.key) || entity.relationship(named: $0.key) != nil }
        let alias: String? = qualified ? "t0" : nil
        var scope = RenderScope(entity: entity, alias: alias)
        var from = qualifiedTable(entity) + (qualified ? " AS \"t0\"" : "")
        var conditions: [String] = []
        var via: String?
        if let related = request.related {
            let (join, condition, viaColumn) = try renderRelated(related, destination: entity, &b)
            from += join
            conditions.append(condition)
            via = viaColumn
        }
        if schema.needsEntityFilter(entity.name) {
            conditions.append(entityFilter(entity.name, alias: alias, &b))
        }
        if let predicate = request.predicate {
            conditions.append(try render(predicate, &scope, &b))
        }
        if let ownership = request.ownership {
            conditions.append(ownershipCondition(ownership, of: entity, alias: alias))
        }
        if let ids = request.identifiers {
            conditions.append(ids.isEmpty ? "FALSE" : "\(Self.column("id", alias)) IN (\(ids.map { b.bind(.uuid($0)) }.joined(separator: ", ")))")
        }
        // The sort keys' SQL, shared by ORDER BY and the keyset condition so both compare the same thing.
        var sortColumns: [String] = []
        if page || request.after != nil {
            for key in request.sort {
                do {
                    if let type = key.field {
                        let parts = key.key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
                        guard let first = parts.first, !parts.contains(where: \.isEmpty) else {
                            throw PGModelError(.unsupportedSort, "sort key '\(key.key)' of \(entity.name) is not a key path",
                                               model: entity.name, keyPath: key.key)
                        }
                        sortColumns.append(try render(.field(.key(first), Array(parts.dropFirst()), type), &scope, &b))
                    } else {
                        sortColumns.append(try resolveKey(key.key, &scope, &b).sql)
                    }
                } catch let error as PGModelError where error.code == .unsupportedPredicate {
                    throw PGModelError(.unsupportedSort, error.message, model: error.model, keyPath: error.keyPath)
                }
            }
        }
        if let after = request.after {
            conditions.append(keysetCondition(after, sort: request.sort, columns: sortColumns, id: Self.column("id", alias), &b))
        }
        var tail = ""
        if !conditions.isEmpty {
            tail += " WHERE " + conditions.joined(separator: " AND ")
        }
        if page {
            var order: [String] = []
            for (key, column) in zip(request.sort, sortColumns) {
                // Swift orders nil before any value; PostgreSQL's default is the opposite.
                order.append(key.ascending ? "\(column) ASC NULLS FIRST" : "\(column) DESC NULLS LAST")
            }
            // The id breaks ties so that pages (limit/offset) are stable across calls.
            order.append("\(Self.column("id", alias)) ASC")
            if let via { order.append("\(via) ASC") }
            tail += " ORDER BY " + order.joined(separator: ", ")
            if let limit = request.limit {
                guard limit >= 0 else {
                    throw PGModelError(.invalidField, "fetchLimit of a fetch of \(entity.name) must not be negative", model: entity.name)
                }
                tail += " LIMIT \(b.bind(.int(Int64(limit))))"
            }
            if let offset = request.offset {
                guard offset >= 0 else {
                    throw PGModelError(.invalidField, "fetchOffset of a fetch of \(entity.name) must not be negative", model: entity.name)
                }
                tail += " OFFSET \(b.bind(.int(Int64(offset))))"
            }
        }
        if lock {
            tail += qualified ? " FOR UPDATE OF \"t0\"" : " FOR UPDATE"
        }
        b.sql = "SELECT \(columns(alias, via)) FROM \(from)\(scope.joins.joined())\(tail)"
        return try b.checkedStatement(model: entity.name)
    }

    /// The rows of `ownership`. The requesting user is `pgmodel.current_user_id()` (NULL outside the service,
    /// where the store's own rows have no owner); the rows shared with them are the ids row-level security
    /// lets them read through shares, so a fetch never names more than the policy shows.
    func ownershipCondition(_ ownership: RowOwnership, of entity: EntityDescription, alias: String?) -> String {
        let owner = Self.column("owner_id", alias)
        let me = "(SELECT \"pgmodel\".\"current_user_id\"())"
        switch ownership {
        case .owned:
            return "\(owner) IS NOT DISTINCT FROM \(me)"
        case .sharedWithMe:
            let root = schema.rootEntity(of: entity.name)?.name ?? entity.name
            let shared = "(SELECT \(Naming.quoted(schemaName)).\"pgmodel_shared_ids\"(\(literal(root)), false, false))::uuid[]"
            return "(\(owner) IS DISTINCT FROM \(me) AND \(Self.column("id", alias)) = ANY (\(shared)))"
        }
    }

    /// The rows strictly after `cursor` in the order ORDER BY gives (each key ASC NULLS FIRST or DESC NULLS
    /// LAST, then the id ascending), expanded key by key, because a row-value comparison `(a, b) > ($1, $2)`
    /// knows neither mixed directions nor where NULLs sort. NULL is the first value of an ascending key and
    /// the last of a descending one, so, with `R` the condition on the keys after `k`:
    ///
    /// - ascending, `v` not NULL: `k >= v AND (k > v OR R)` (the leading `>=` lets an index on `k` start at `v`)
    /// - ascending, `v` NULL: `k IS NOT NULL OR (k IS NULL AND R)`
    /// - descending, `v` not NULL: `k < v OR k IS NULL OR (k = v AND R)`
    /// - descending, `v` NULL: `k IS NULL AND R`
    ///
    /// and after the last key, `id > <cursor id>`.
    func keysetCondition(_ cursor: FetchCursor, sort: [SortKey], columns: [String], id: String,
                         _ b: inout SQLBuilder) -> String {
        var condition = "\(id) > \(b.bind(.uuid(cursor.id)))"
        for index in sort.indices.reversed() {
            let column = columns[index]
            let value = cursor.values[index]
            switch (sort[index].ascending, value.isNull) {
            case (true, false):
                let p = b.bind(value)
                condition = "(\(column) >= \(p) AND (\(column) > \(p) OR \(condition)))"
            case (true, true):
                condition = "(\(column) IS NOT NULL OR (\(column) IS NULL AND \(condition)))"
            case (false, false):
                let p = b.bind(value)
                condition = "(\(column) < \(p) OR \(column) IS NULL OR (\(column) = \(p) AND \(condition)))"
            case (false, true):
                condition = "(\(column) IS NULL AND \(condition))"
            }
        }
        return condition
    }

    /// The join, condition and `via` column that restrict a fetch of `destination` (aliased `t0`) to the
    /// rows `related.ids` reach through `related.relationship`.
    private func renderRelated(_ related: RelatedScope, destination: EntityDescription,
                               _ b: inout SQLBuilder) throws -> (join: String, condition: String, via: String) {
        let source = try self.entity(related.entity)
        guard let relationship = source.relationship(named: related.relationship) else {
            throw PGModelError(.unknownAttribute, "\(source.name) has no relationship '\(related.relationship)'", model: source.name, keyPath: related.relationship)
        }
        guard schema.rootEntity(of: relationship.destination)?.name == schema.rootEntity(of: destination.name)?.name else {
            throw PGModelError(.invalidField, "\(source.name).\(relationship.name) leads to \(relationship.destination), not \(destination.name)",
                               model: destination.name, keyPath: relationship.name)
        }
        switch schema.storage(of: relationship, in: source) {
        case .foreignKey(let column):
            let s = b.nextAlias()
            let condition = "\(Self.column("id", s)) = ANY(\(b.bindIDs(related.ids)))"
            return (" JOIN \(qualifiedTable(source)) AS \(Naming.quoted(s)) ON \(Self.column(column, s)) = \"t0\".\"id\"", condition, Self.column("id", s))
        case .inverseForeignKey(let column):
            return ("", "\(Self.column(column, "t0")) = ANY(\(b.bindIDs(related.ids)))", Self.column(column, "t0"))
        case .joinTable(let table, let sourceColumn, let destinationColumn):
            let j = b.nextAlias()
            return (" JOIN \(qualifiedTable(named: table)) AS \(Naming.quoted(j)) ON \(Self.column(destinationColumn, j)) = \"t0\".\"id\"",
                    "\(Self.column(sourceColumn, j)) = ANY(\(b.bindIDs(related.ids)))", Self.column(sourceColumn, j))
        }
    }
}
