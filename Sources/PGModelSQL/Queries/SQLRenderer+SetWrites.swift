import Foundation
@_spi(PGModelInternals) import PGModelCore

/// Set-based updates and join-table links: one statement for many rows, each column one array parameter,
/// so a save of N changes costs a constant number of round trips. The store falls back to the one-row
/// statements of ``update(_:)`` and ``link(_:)`` where a group has one row.
@_spi(PGModelInternals) extension SQLRenderer {
    /// A set-based ``update(_:)`` of many rows of one class: one `UPDATE … FROM unnest(…)` whatever the
    /// number of rows, returning `id, owner_id` of each row updated (a row missing from the result is
    /// missing, or not writable by the caller: row-level security).
    ///
    /// ```swift
    /// try renderer.update([a, b])   // a changes name and note, b only note
    /// // UPDATE "app"."trip" AS "t" SET "name" = CASE WHEN "v"."m1" THEN "v"."c1" ELSE "t"."name" END, "note" = "v"."c2"
    /// // FROM unnest($1::uuid[], $2::text[], $3::bool[], $4::text[]) AS "v"("id", "c1", "m1", "c2")
    /// // WHERE "t"."id" = "v"."id" RETURNING "t"."id", "t"."owner_id"
    /// ```
    ///
    /// Rows may change different columns: a column some rows leave alone carries a `bool[]` mask, and
    /// those rows keep their value. Each row is assigned exactly what ``update(_:)`` would assign it.
    /// Every row must be of one class with distinct ids (a join matches each target row once).
    ///
    /// `returningReplaced` locks the rows first and returns what each update replaced
    /// (``replacedColumns(of:)-([RowValues])``) after the id and owner; `returningStored` then adds every
    /// stored column's new value (``storedColumns(of:)``), the whole row as the update leaves it.
    public func update(_ rows: [RowValues], returningReplaced: Bool = false, returningStored: Bool = false) throws -> SQLStatement {
        guard let first = rows.first else {
            throw PGModelError(.internalError, "a set-based update needs at least one row")
        }
        let entity = try self.entity(first.entity)
        var changed = Set<String>()
        for row in rows {
            guard row.entity == entity.name else {
                throw PGModelError(.internalError, "a set-based update mixes \(entity.name) and \(row.entity)", model: row.entity)
            }
            try rejectUnknownKeys(row, entity)
            guard !row.isEmpty else {
                throw PGModelError(.missingField, "an update of \(entity.name) changes no attribute", model: entity.name)
            }
            row.forEachValue { key, _ in changed.insert(key) }
        }
        // The columns any row changes, in the class's order (attributes, then foreign keys), as the
        // one-row statement lists them.
        var columns: [(key: String, column: String, attribute: AttributeDescription?, relationship: RelationshipDescription?)] = []
        for attribute in entity.attributes where changed.contains(attribute.name) {
            columns.append((attribute.name, attribute.columnName, attribute, nil))
        }
        for (relationship, column) in foreignKeys(of: entity) where changed.contains(relationship.name) {
            columns.append((relationship.name, column, nil, relationship))
        }
        var ids: [PGValue] = []
        ids.reserveCapacity(rows.count)
        var values = Array(repeating: [PGValue](), count: columns.count)
        var masks = Array(repeating: [PGValue](), count: columns.count)
        for i in columns.indices {
            values[i].reserveCapacity(rows.count)
            masks[i].reserveCapacity(rows.count)
        }
        for row in rows {
            ids.append(.uuid(row.id))
            for (i, column) in columns.enumerated() {
                guard let raw = row[column.key] else {
                    values[i].append(.null)
                    masks[i].append(.bool(false))
                    continue
                }
                if let attribute = column.attribute {
                    values[i].append(try coerced(raw, attribute, entity, requirePresent: true))
                } else if let relationship = column.relationship {
                    values[i].append(try foreignKeyValue(raw, relationship, entity))
                }
                masks[i].append(.bool(true))
            }
        }
        var b = SQLBuilder()
        var parameters = [b.bind(SQLArray(.uuid, ids))]
        var aliases = ["\"id\""]
        var assignments: [String] = []
        for (i, column) in columns.enumerated() {
            let type = column.attribute?.type
            parameters.append(b.bind(SQLArray(type.map(SQLArray.Element.init) ?? .uuid, values[i])))
            let value = "\"v\".\"c\(i + 1)\""
            aliases.append("\"c\(i + 1)\"")
            var expression = value
            if let type {
                switch type {
                case .stringArray, .int64Array, .doubleArray, .boolArray:
                    // An array column's expression of a NULL would be an empty array.
                    expression = "CASE WHEN \(value) IS NULL THEN NULL ELSE \(type.bindExpression(value)) END"
                default:
                    expression = type.bindExpression(value)
                }
            }
            // A column only some rows change: the others keep what they have.
            if masks[i].contains(.bool(false)) {
                parameters.append(b.bind(SQLArray(.bool, masks[i])))
                aliases.append("\"m\(i + 1)\"")
                expression = "CASE WHEN \"v\".\"m\(i + 1)\" THEN \(expression) ELSE \"t\".\(Naming.quoted(column.column)) END"
            }
            assignments.append("\(Naming.quoted(column.column)) = \(expression)")
        }
        let table = qualifiedTable(entity)
        let stored = returningStored
            ? storedColumnList(of: entity).map { ", " + Self.readExpression("\"t\".\(Naming.quoted($0.column))", $0.type) }.joined() : ""
        guard returningReplaced else {
            b.sql = "UPDATE \(table) AS \"t\" SET \(assignments.joined(separator: ", ")) "
                + "FROM unnest(\(parameters.joined(separator: ", "))) AS \"v\"(\(aliases.joined(separator: ", "))) "
                + "WHERE \"t\".\"id\" = \"v\".\"id\" RETURNING \"t\".\"id\", \"t\".\"owner_id\"" + stored
            return b.statement
        }
        // The rows as they are before the update, locked first (a concurrent writer's commit is waited
        // for and read): what each update replaces, returned after the id and owner.
        let replaced = (["\"id\""] + columns.map { Naming.quoted($0.column) }).joined(separator: ", ")
        b.sql = "UPDATE \(table) AS \"t\" SET \(assignments.joined(separator: ", ")) "
            + "FROM unnest(\(parameters.joined(separator: ", "))) AS \"v\"(\(aliases.joined(separator: ", "))), "
            + "(SELECT \(replaced) FROM \(table) WHERE \"id\" = ANY(\(parameters[0])) FOR UPDATE) AS \"replaced\" "
            + "WHERE \"t\".\"id\" = \"v\".\"id\" AND \"t\".\"id\" = \"replaced\".\"id\" RETURNING \"t\".\"id\", \"t\".\"owner_id\""
            + columns.map { column in
                let cell = "\"replaced\".\(Naming.quoted(column.column))"
                return ", " + (column.attribute.map { $0.type.selectExpression(cell) } ?? cell)
            }.joined()
            + stored
        return b.statement
    }

    /// A set-based ``link(_:)`` of many changes of one relationship, all additions or all removals, as
    /// one statement. Additions are `INSERT … SELECT FROM unnest(…) ON CONFLICT DO NOTHING`; removals are
    /// `DELETE … USING unnest(…)`. Both return the source and destination of each link they added or
    /// removed, so a change missing from the result changed nothing (the link was there already, or gone,
    /// or the user may not remove it).
    ///
    /// ```swift
    /// try renderer.links([follow1, follow2])   // two additions of User.following
    /// // INSERT INTO "app"."user_followers" ("followers_id", "user_id")
    /// // SELECT "v"."s", "v"."d" FROM unnest($1::uuid[], $2::uuid[]) AS "v"("s", "d") ON CONFLICT DO NOTHING
    /// // RETURNING "followers_id", "user_id"
    /// ```
    public func links(_ changes: [LinkChange]) throws -> SQLStatement {
        guard let first = changes.first else {
            throw PGModelError(.internalError, "a set-based link change needs at least one change")
        }
        guard changes.allSatisfy({ $0.entity == first.entity && $0.relationship == first.relationship && $0.isAdded == first.isAdded }) else {
            throw PGModelError(.internalError, "a set-based link change mixes relationships or additions and removals", model: first.entity)
        }
        let (table, sourceColumn, destinationColumn) = try joinTable(of: first)
        var b = SQLBuilder()
        let sources = b.bind(SQLArray(.uuid, changes.map { .uuid($0.source) }))
        let destinations = b.bind(SQLArray(.uuid, changes.map { .uuid($0.destination) }))
        let source = Naming.quoted(sourceColumn), destination = Naming.quoted(destinationColumn)
        if first.isAdded {
            b.sql = "INSERT INTO \(qualifiedTable(named: table)) (\(source), \(destination)) SELECT \"v\".\"s\", \"v\".\"d\" "
                + "FROM unnest(\(sources), \(destinations)) AS \"v\"(\"s\", \"d\") ON CONFLICT DO NOTHING RETURNING \(source), \(destination)"
        } else {
            b.sql = "DELETE FROM \(qualifiedTable(named: table)) AS \"j\" USING unnest(\(sources), \(destinations)) AS \"v\"(\"s\", \"d\") "
                + "WHERE \"j\".\(source) = \"v\".\"s\" AND \"j\".\(destination) = \"v\".\"d\" RETURNING \"j\".\(source), \"j\".\(destination)"
        }
        return b.statement
    }

    /// `SELECT source, destination` of the links among `changes` (of one relationship) that exist and the
    /// connection may see: tells removals the user may not make from links that are already gone.
    public func existingLinks(_ changes: [LinkChange]) throws -> SQLStatement {
        guard let first = changes.first else {
            throw PGModelError(.internalError, "a link lookup needs at least one link")
        }
        guard changes.allSatisfy({ $0.entity == first.entity && $0.relationship == first.relationship }) else {
            throw PGModelError(.internalError, "a link lookup mixes relationships", model: first.entity)
        }
        let (table, sourceColumn, destinationColumn) = try joinTable(of: first)
        var b = SQLBuilder()
        let sources = b.bind(SQLArray(.uuid, changes.map { .uuid($0.source) }))
        let destinations = b.bind(SQLArray(.uuid, changes.map { .uuid($0.destination) }))
        let source = Naming.quoted(sourceColumn), destination = Naming.quoted(destinationColumn)
        b.sql = "SELECT \"j\".\(source), \"j\".\(destination) FROM \(qualifiedTable(named: table)) AS \"j\" "
            + "JOIN unnest(\(sources), \(destinations)) AS \"v\"(\"s\", \"d\") ON \"j\".\(source) = \"v\".\"s\" AND \"j\".\(destination) = \"v\".\"d\""
        return b.statement
    }

    /// The join table of `change`'s relationship and its two columns, as that side names them
    /// (`source` holds the changed row's id): what tells two changes naming one link from either side.
    public func joinColumns(of change: LinkChange) throws -> (table: String, source: String, destination: String) {
        let (table, source, destination) = try joinTable(of: change)
        return (table, source, destination)
    }
}
