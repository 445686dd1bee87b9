import Foundation
@_spi(PGModelInternals) import PGModelCore

/// Where the keys of an expression resolve: an entity, the alias of its table (`nil`: columns are
/// unqualified, as in a single-table query) and the LEFT JOINs dotted keys added. Which rows of each
/// joined or sub-queried table a user sees is row-level security's business, not the renderer's.
struct RenderScope {
    var entity: EntityDescription
    var alias: String?
    /// ` LEFT JOIN …` fragments, in the order they were added; the caller appends them to its FROM.
    var joins: [String] = []
    /// Relationship path (`album`, `trip.livingAccommodation`) → alias and entity of its join.
    var joinAliases: [String: (alias: String, entity: EntityDescription)] = [:]

    init(entity: EntityDescription, alias: String?) {
        self.entity = entity
        self.alias = alias
    }

    /// `"alias"."column"`, or `"column"` when unqualified.
    func column(_ name: String) -> String {
        SQLRenderer.column(name, alias)
    }
}

@_spi(PGModelInternals) extension SQLRenderer {
    /// The SQL boolean expression for `expression` over `entity`'s table, with its binds numbered from `$1`.
    /// Columns are unqualified unless the expression needs joins or subqueries (dotted keys, relationship
    /// keys, aggregates); then the entity's table is `"t0"`.
    ///
    /// ```swift
    /// try renderer.renderPredicate(.compare(.equal, .key("destination"), .value(.string("Paris"))), entity: "Trip")
    /// // ("destination" = $1), binds [.string("Paris")]
    /// ```
    public func renderPredicate(_ expression: QueryExpression, entity: String) throws -> SQLStatement {
        try expression.validate(against: schema, entity: entity)
        let entity = try self.entity(entity)
        var builder = SQLBuilder()
        var scope = RenderScope(entity: entity, alias: needsQualification(expression, in: entity) ? "t0" : nil)
        let sql = try render(expression, &scope, &builder)
        builder.sql = scope.joins.isEmpty ? sql : scope.joins.joined() + " WHERE " + sql
        return try builder.checkedStatement(model: entity.name)
    }

    static func column(_ name: String, _ alias: String?) -> String {
        (alias.map { Naming.quoted($0) + "." } ?? "") + Naming.quoted(name)
    }

    /// Whether rendering `expression` needs table aliases: it reaches other tables.
    func needsQualification(_ expression: QueryExpression, in entity: EntityDescription) -> Bool {
        switch expression {
        case .key(let name): return Naming.isDotted(name) || entity.relationship(named: name) != nil
        case .aggregate: return true
        case .value, .isKind: return false
        case .compare(_, let l, let r), .arithmetic(_, let l, let r), .string(_, let l, let r), .coalesce(let l, let r):
            return needsQualification(l, in: entity) || needsQualification(r, in: entity)
        case .and(let ops), .or(let ops): return ops.contains { needsQualification($0, in: entity) }
        case .not(let e), .negate(let e), .in(let e, _), .field(let e, _, _): return needsQualification(e, in: entity)
        case .arrayContains(let l, let r): return needsQualification(l, in: entity) || needsQualification(r, in: entity)
        case .arrayElement(let e, _), .arrayFold(_, let e): return needsQualification(e, in: entity)
        case .conditional(let a, let b, let c):
            return needsQualification(a, in: entity) || needsQualification(b, in: entity) || needsQualification(c, in: entity)
        }
    }

    func render(_ expression: QueryExpression, _ scope: inout RenderScope, _ b: inout SQLBuilder) throws -> String {
        switch expression {
        case .key(let name):
            return try resolveKey(name, &scope, &b).sql
        case .value(let value):
            return value.isNull ? "NULL" : b.bind(value)
        case .isKind(let name):
            guard schema.entity(named: name) != nil else {
                throw PGModelError(.unknownEntity, "`is \(name)` names an entity that is not registered in the schema", model: scope.entity.name)
            }
            return entityFilter(name, alias: scope.alias, &b)
        case .aggregate(let aggregate):
            return try renderAggregate(aggregate, &scope, &b)
        case .field(let document, let path, let type):
            guard case .key(let name) = document else {
                throw PGModelError(.unsupportedPredicate, "a field can only be read from a stored Codable attribute", model: scope.entity.name)
            }
            let (column, attribute) = try resolveKey(name, &scope, &b)
            guard attribute?.type == .json else {
                throw PGModelError(.unsupportedPredicate, "'\(name)' is not a Codable (jsonb) attribute, so it has no fields", model: scope.entity.name, keyPath: name)
            }
            guard !path.isEmpty else { return column }
            let text = "(\(column) #>> ARRAY[\(path.map { b.bind(.string($0)) }.joined(separator: ", "))]::text[])"
            switch type {
            case .string, .url: return text
            case .bool, .int16, .int32, .int64, .float, .double, .decimal: return "\(text)::\(type.postgresType)"
            default:
                throw PGModelError(.unsupportedPredicate, "field \(path.joined(separator: ".")) of '\(name)' has a type (\(type.rawValue)) predicates cannot compare inside a document", model: scope.entity.name, keyPath: name)
            }
        case .arrayContains(let array, let element):
            guard case .key(let name) = array else {
                throw PGModelError(.unsupportedPredicate, "contains(_:) needs a stored array attribute", model: scope.entity.name)
            }
            let (column, attribute) = try resolveKey(name, &scope, &b)
            guard let elementType = attribute?.type.arrayElementType else {
                throw PGModelError(.unsupportedPredicate, "'\(name)' is not an array attribute of scalars", model: scope.entity.name, keyPath: name)
            }
            let value = try render(element, &scope, &b)
            return "COALESCE((\(value))::\(elementType.postgresType) = ANY(\(column)), FALSE)"
        case .arrayElement(let array, let index):
            let column = try arrayColumn(array, "an index subscript", &scope, &b)
            guard index >= 0, index < Int(Int32.max) else {
                throw PGModelError(.invalidField, "an array index must be between 0 and \(Int32.max - 1), not \(index)", model: scope.entity.name)
            }
            // PostgreSQL counts from 1 and gives NULL past the end, where Swift would trap.
            return "(\(column))[\(index + 1)]"
        case .arrayFold(let fold, let array):
            switch fold {
            case .count:
                return "COALESCE(cardinality(\(try arrayColumn(array, "count", &scope, &b))), 0)"
            case .min, .max:
                let column = try arrayColumn(array, fold == .min ? "min()" : "max()", &scope, &b)
                return "(SELECT \(fold == .min ? "min" : "max")(\"element\") FROM unnest(\(column)) AS \"folded\"(\"element\"))"
            }
        case .compare(let op, let lhs, let rhs):
            return try renderComparison(op, lhs, rhs, &scope, &b)
        case .and(let operands):
            guard !operands.isEmpty else { return "TRUE" }
            return "(" + (try operands.map { try render($0, &scope, &b) }).joined(separator: " AND ") + ")"
        case .or(let operands):
            guard !operands.isEmpty else { return "FALSE" }
            return "(" + (try operands.map { try render($0, &scope, &b) }).joined(separator: " OR ") + ")"
        case .not(let operand):
            return "(NOT \(try render(operand, &scope, &b)))"
        case .arithmetic(let op, let lhs, let rhs):
            let symbol: String
            switch op {
            case .add: symbol = "+"
            case .subtract: symbol = "-"
            case .multiply: symbol = "*"
            case .divide: symbol = "/"
            case .remainder: symbol = "%"
            }
            return "(\(try render(lhs, &scope, &b)) \(symbol) \(try render(rhs, &scope, &b)))"
        case .negate(let operand):
            return "(- \(try render(operand, &scope, &b)))"
        case .conditional(let test, let then, let otherwise):
            return "(CASE WHEN \(try render(test, &scope, &b)) THEN \(try render(then, &scope, &b)) ELSE \(try render(otherwise, &scope, &b)) END)"
        case .string(let op, let lhs, let rhs):
            let l = try render(lhs, &scope, &b)
            let r = try render(rhs, &scope, &b)
            switch op {
            case .contains:
                // strpos, not LIKE: the needle's % and _ are data, not wildcards.
                return "(strpos(\(l), \(r)) > 0)"
            case .startsWith:
                return "starts_with(\(l), \(r))"
            case .localizedStandardContains:
                return "(strpos(pgmodel.fold(\(l)), pgmodel.fold(\(r))) > 0)"
            case .caseInsensitiveCompare:
                return "(CASE WHEN lower(\(l)) COLLATE \"C\" < lower(\(r)) COLLATE \"C\" THEN -1 WHEN lower(\(l)) COLLATE \"C\" > lower(\(r)) COLLATE \"C\" THEN 1 ELSE 0 END)"
            case .localizedCompare:
                // The database's collation: the order a string sort uses, so the two agree.
                return "(CASE WHEN \(l) < \(r) THEN -1 WHEN \(l) > \(r) THEN 1 ELSE 0 END)"
            }
        case .in(let needle, let values):
            let present = values.filter { !$0.isNull }
            let hasNil = present.count != values.count
            let n = try render(needle, &scope, &b)
            var parts: [String] = []
            if !present.isEmpty {
                // COALESCE: a NULL needle is simply not in the list, as in Swift; never NULL under NOT.
                parts.append("COALESCE(\(n) IN (\(present.map { b.bind($0) }.joined(separator: ", "))), FALSE)")
            }
            if hasNil { parts.append("(\(n) IS NULL)") }
            if parts.isEmpty { return "FALSE" }
            return parts.count == 1 ? parts[0] : "(" + parts.joined(separator: " OR ") + ")"
        case .coalesce(let lhs, let rhs):
            return "COALESCE(\(try render(lhs, &scope, &b)), \(try render(rhs, &scope, &b)))"
        }
    }

    /// The column of the stored array attribute `array` names.
    private func arrayColumn(_ array: QueryExpression, _ what: String, _ scope: inout RenderScope, _ b: inout SQLBuilder) throws -> String {
        guard case .key(let name) = array else {
            throw PGModelError(.unsupportedPredicate, "\(what) needs a stored array attribute", model: scope.entity.name)
        }
        let (column, attribute) = try resolveKey(name, &scope, &b)
        guard attribute?.type.arrayElementType != nil else {
            throw PGModelError(.unsupportedPredicate, "'\(name)' is not an array attribute of scalars, so \(what) cannot read it", model: scope.entity.name, keyPath: name)
        }
        return column
    }

    /// `"entity" IN ($1, …)`: rows of `name` or any of its subclasses.
    func entityFilter(_ name: String, alias: String?, _ b: inout SQLBuilder) -> String {
        let names = schema.entityNames(inHierarchyOf: name)
        return "\(Self.column("entity", alias)) IN (\(names.map { b.bind(.string($0)) }.joined(separator: ", ")))"
    }

    private func renderComparison(_ op: ComparisonOperator, _ lhs: QueryExpression, _ rhs: QueryExpression,
                                  _ scope: inout RenderScope, _ b: inout SQLBuilder) throws -> String {
        if op == .equal || op == .notEqual {
            for (value, other) in [(rhs, lhs), (lhs, rhs)] {
                guard case .value(.null) = value else { continue }
                // `partner == nil` where the key lives on the other table: [NOT] EXISTS, no join.
                if case .key(let path) = other, let exists = try inverseToOneExists(path, &scope, &b) {
                    return op == .equal ? "(NOT EXISTS (\(exists)))" : "EXISTS (\(exists))"
                }
                return "(\(try render(other, &scope, &b)) IS \(op == .equal ? "" : "NOT ")NULL)"
            }
            let l = try render(lhs, &scope, &b)
            let r = try render(rhs, &scope, &b)
            // Swift's == on optionals treats nil == nil as true and never yields "unknown";
            // IS [NOT] DISTINCT FROM is the SQL operator with exactly that meaning.
            if mayBeNull(lhs, in: scope.entity) || mayBeNull(rhs, in: scope.entity) {
                return "(\(l) IS \(op == .equal ? "NOT " : "")DISTINCT FROM \(r))"
            }
            return "(\(l) \(op == .equal ? "=" : "<>") \(r))"
        }
        let symbol: String
        switch op {
        case .less: symbol = "<"
        case .lessOrEqual: symbol = "<="
        case .greater: symbol = ">"
        case .greaterOrEqual: symbol = ">="
        case .equal, .notEqual: symbol = "="
        }
        return "(\(try render(lhs, &scope, &b)) \(symbol) \(try render(rhs, &scope, &b)))"
    }

    /// Whether `expression` can evaluate to SQL NULL: an optional attribute, a relationship, a dotted key
    /// (the relationship may be nil), or an expression over one.
    func mayBeNull(_ expression: QueryExpression, in entity: EntityDescription) -> Bool {
        switch expression {
        case .key(let name):
            if Naming.isDotted(name) || entity.relationship(named: name) != nil { return true }
            if let attribute = entity.attribute(named: name) { return attribute.isOptional }
            // A subclass column is NULL in the rows of every other class.
            return subclassAttribute(name, below: entity) != nil
        case .value(let v): return v.isNull
        case .arithmetic(_, let l, let r), .string(_, let l, let r): return mayBeNull(l, in: entity) || mayBeNull(r, in: entity)
        case .negate(let e): return mayBeNull(e, in: entity)
        case .conditional(_, let t, let e): return mayBeNull(t, in: entity) || mayBeNull(e, in: entity)
        case .coalesce(_, let r): return mayBeNull(r, in: entity)
        case .compare, .and, .or, .not, .in, .isKind, .arrayContains: return false
        case .field, .arrayElement: return true
        case .arrayFold(let fold, _): return fold != .count
        case .aggregate(let a): return a.function == .min || a.function == .max
        }
    }

    // MARK: Keys and relationship paths

    /// An attribute declared by a subclass of `entity`: `as?` casts in predicates reach them, and a
    /// hierarchy shares one table, so the column is right there.
    func subclassAttribute(_ name: String, below entity: EntityDescription) -> AttributeDescription? {
        for subclass in schema.entityNames(inHierarchyOf: entity.name).dropFirst() {
            if let attribute = schema.entity(named: subclass)?.attribute(named: name) { return attribute }
        }
        return nil
    }

    /// A relationship declared by a subclass of `entity`.
    func subclassRelationship(_ name: String, below entity: EntityDescription) -> RelationshipDescription? {
        for subclass in schema.entityNames(inHierarchyOf: entity.name).dropFirst() {
            if let relationship = schema.entity(named: subclass)?.relationship(named: name) { return relationship }
        }
        return nil
    }

    /// The SQL of key `path`: an attribute column, a to-one relationship's id, or either reached through
    /// to-one relationships (LEFT JOINs added to `scope`).
    func resolveKey(_ path: String, _ scope: inout RenderScope, _ b: inout SQLBuilder) throws -> (sql: String, attribute: AttributeDescription?) {
        let parts = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let (entity, alias) = try walkToOne(parts.dropLast(), fullPath: path, &scope, &b)
        let last = parts[parts.count - 1]
        if let attribute = entity.attribute(named: last) ?? subclassAttribute(last, below: entity) {
            guard !attribute.isOpaque else {
                throw PGModelError(.unsupportedPredicate,
                    "'\(last)' of \(entity.name) is stored with @Attribute(.codable): opaque, so predicates and sorts cannot use it; model the type as a Codable struct without .codable to query its fields",
                    model: scope.entity.name, keyPath: path)
            }
            return (Self.column(attribute.columnName, alias), attribute)
        }
        guard let relationship = entity.relationship(named: last) ?? subclassRelationship(last, below: entity) else {
            throw PGModelError(.unknownAttribute, "\(entity.name) has no stored property '\(last)'", model: scope.entity.name, keyPath: path)
        }
        guard !relationship.isToMany else {
            throw PGModelError(.unsupportedPredicate,
                "'\(path)' is the to-many relationship '\(last)' of \(entity.name); use count, contains(where:) or allSatisfy on it",
                model: scope.entity.name, keyPath: path)
        }
        switch schema.storage(of: relationship, in: entity) {
        case .foreignKey(let column):
            return (Self.column(column, alias), nil)
        case .inverseForeignKey(let column):
            // A one-to-one whose key is on the other side: that row's id (the first, should there be several).
            let destination = try self.entity(relationship.destination)
            let d = b.nextAlias()
            let sql = "SELECT \(Self.column("id", d)) FROM \(qualifiedTable(destination)) AS \(Naming.quoted(d)) WHERE \(Self.column(column, d)) = \(Self.column("id", alias ?? "t0"))"
            return ("(" + sql + " ORDER BY \(Self.column("id", d)) LIMIT 1)", nil)
        case .joinTable:
            throw PGModelError(.internalError, "to-one relationship '\(last)' of \(entity.name) resolved to a join table", model: entity.name, keyPath: path)
        }
    }

    /// For `path` naming a one-to-one relationship whose key lives on the other table: the body of an
    /// `EXISTS` that finds the related row. `nil` for any other key.
    private func inverseToOneExists(_ path: String, _ scope: inout RenderScope, _ b: inout SQLBuilder) throws -> String? {
        let parts = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        // Check the shape before rendering anything, so no bind is added that the SQL does not use.
        var entity = scope.entity
        for part in parts.dropLast() {
            guard let relationship = entity.relationship(named: part), !relationship.isToMany,
                  let next = schema.entity(named: relationship.destination) else { return nil }
            entity = next
        }
        guard let relationship = entity.relationship(named: parts[parts.count - 1]), !relationship.isToMany,
              case .inverseForeignKey(let column) = schema.storage(of: relationship, in: entity) else { return nil }
        let (_, alias) = try walkToOne(parts.dropLast(), fullPath: path, &scope, &b)
        let destination = try self.entity(relationship.destination)
        let d = b.nextAlias()
        let sql = "SELECT 1 FROM \(qualifiedTable(destination)) AS \(Naming.quoted(d)) WHERE \(Self.column(column, d)) = \(Self.column("id", alias ?? "t0"))"
        return sql
    }

    /// Follows to-one relationships `steps` from `scope`'s entity, adding one LEFT JOIN per step (shared by
    /// every key with the same prefix). Returns the entity reached and its alias.
    func walkToOne<S: Sequence<String>>(_ steps: S, fullPath: String, _ scope: inout RenderScope, _ b: inout SQLBuilder) throws -> (EntityDescription, String?) {
        var entity = scope.entity
        var alias = scope.alias
        var prefix = ""
        for step in steps {
            guard let relationship = entity.relationship(named: step) else {
                if entity.attribute(named: step) != nil {
                    throw PGModelError(.unsupportedPredicate, "'\(step)' in key path '\(fullPath)' is an attribute of \(entity.name), not a relationship",
                                       model: scope.entity.name, keyPath: fullPath)
                }
                throw PGModelError(.unknownAttribute, "\(entity.name) has no relationship '\(step)' (in key path '\(fullPath)')",
                                   model: scope.entity.name, keyPath: fullPath)
            }
            guard !relationship.isToMany else {
                throw PGModelError(.unsupportedPredicate,
                    "key path '\(fullPath)' goes through the to-many relationship '\(step)' of \(entity.name); only to-one relationships can be followed with dots",
                    model: scope.entity.name, keyPath: fullPath)
            }
            prefix += (prefix.isEmpty ? "" : ".") + step
            let destination = try self.entity(relationship.destination)
            if let existing = scope.joinAliases[prefix] {
                entity = existing.entity
                alias = existing.alias
                continue
            }
            let a = b.nextAlias()
            let from = alias ?? "t0"
            let table = qualifiedTable(destination)
            switch schema.storage(of: relationship, in: entity) {
            case .foreignKey(let column):
                scope.joins.append(" LEFT JOIN \(table) AS \(Naming.quoted(a)) ON \(Self.column("id", a)) = \(Self.column(column, from))")
            case .inverseForeignKey(let column):
                // The key is on the other side, which may (wrongly) hold several rows: take one, never duplicate.
                scope.joins.append(" LEFT JOIN LATERAL (SELECT * FROM \(table) AS \(Naming.quoted(a)) WHERE \(Self.column(column, a)) = \(Self.column("id", from)) ORDER BY \(Self.column("id", a)) LIMIT 1) AS \(Naming.quoted(a)) ON TRUE")
            case .joinTable:
                throw PGModelError(.internalError, "to-one relationship '\(step)' of \(entity.name) resolved to a join table", model: entity.name, keyPath: fullPath)
            }
            scope.joinAliases[prefix] = (a, destination)
            entity = destination
            alias = a
        }
        return (entity, alias)
    }

    // MARK: Aggregates

    /// A correlated subquery over the destination rows of a to-many relationship.
    private func renderAggregate(_ aggregate: Aggregate, _ scope: inout RenderScope, _ b: inout SQLBuilder) throws -> String {
        let path = aggregate.relationship
        let parts = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let (source, sourceAlias) = try walkToOne(parts.dropLast(), fullPath: path, &scope, &b)
        let name = parts[parts.count - 1]
        guard let relationship = source.relationship(named: name) else {
            throw PGModelError(.unknownAttribute, "\(source.name) has no relationship '\(name)'", model: scope.entity.name, keyPath: path)
        }
        guard relationship.isToMany else {
            throw PGModelError(.unsupportedPredicate, "'\(path)' is a to-one relationship; \(aggregate.function.rawValue) needs a to-many one",
                               model: scope.entity.name, keyPath: path)
        }
        if aggregate.function == .all && aggregate.predicate == nil { return "TRUE" }   // vacuously
        let destination = try self.entity(relationship.destination)
        let outer = Self.column("id", sourceAlias ?? "t0")
        let d = b.nextAlias()
        var from: String
        var conditions: [String]
        switch schema.storage(of: relationship, in: source) {
        case .inverseForeignKey(let column):
            from = "\(qualifiedTable(destination)) AS \(Naming.quoted(d))"
            conditions = ["\(Self.column(column, d)) = \(outer)"]
        case .joinTable(let table, let sourceColumn, let destinationColumn):
            let j = b.nextAlias()
            from = "\(qualifiedTable(named: table)) AS \(Naming.quoted(j)) JOIN \(qualifiedTable(destination)) AS \(Naming.quoted(d)) ON \(Self.column("id", d)) = \(Self.column(destinationColumn, j))"
            conditions = ["\(Self.column(sourceColumn, j)) = \(outer)"]
        case .foreignKey:
            throw PGModelError(.internalError, "to-many relationship '\(name)' of \(source.name) resolved to a foreign key", model: source.name, keyPath: path)
        }
        if schema.needsEntityFilter(destination.name) {
            conditions.append(entityFilter(destination.name, alias: d, &b))
        }
        var inner = RenderScope(entity: destination, alias: d)
        let predicate = try aggregate.predicate.map { try render($0, &inner, &b) }
        func value() throws -> String {
            guard let value = aggregate.value else {
                throw PGModelError(.unsupportedPredicate, "\(aggregate.function.rawValue) of '\(path)' needs a value to fold", model: scope.entity.name, keyPath: path)
            }
            return try render(value, &inner, &b)
        }
        let folded: String
        switch aggregate.function {
        case .count: folded = "count(*)"
        case .any, .all: folded = "1"
        case .min: folded = "min(\(try value()))"
        case .max: folded = "max(\(try value()))"
        case .sum: folded = "COALESCE(sum(\(try value())), 0)"
        }
        if let predicate {
            // allSatisfy: no related row for which the predicate is false or unknown.
            conditions.append(aggregate.function == .all ? "(\(predicate)) IS NOT TRUE" : predicate)
        }
        let subquery = "SELECT \(folded) FROM \(from)\(inner.joins.joined()) WHERE \(conditions.joined(separator: " AND "))"
        switch aggregate.function {
        case .any: return "EXISTS (\(subquery))"
        case .all: return "(NOT EXISTS (\(subquery)))"
        case .count, .min, .max, .sum: return "(\(subquery))"
        }
    }
}
