import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import Testing

/// The SQL of lightweight migration steps, computed from two schema descriptions.
@Suite("SQL renderer: migrations")
struct MigrationSQLTests {
    static func note(_ attributes: [AttributeDescription], unique: [UniquenessConstraintDescription] = [], indexes: [IndexDescription] = [],
                     relationships: [RelationshipDescription] = []) -> EntityDescription {
        EntityDescription(name: "Note", attributes: attributes, uniquenessConstraints: unique, indexes: indexes, relationships: relationships)
    }

    static func statements(_ old: [EntityDescription], _ new: [EntityDescription]) throws -> [SQLStatement] {
        try SQLRenderer(schema: SchemaDescription(entities: new), schemaName: "app")
            .migrationStatements(from: SchemaDescription(entities: old))
    }

    @Test("a renamed attribute keeps its column's data: RENAME COLUMN, never drop and add")
    func rename() throws {
        let sql = try Self.statements(
            [Self.note([AttributeDescription(name: "title", type: .string)])],
            [Self.note([AttributeDescription(name: "heading", type: .string, originalName: "title")])]).map(\.sql)
        #expect(sql.contains("ALTER TABLE \"app\".\"note\" RENAME COLUMN \"title\" TO \"heading\""))
        #expect(!sql.contains { $0.contains("DROP COLUMN") })
    }

    @Test("a new non-optional attribute with a default is added with DEFAULT, its value a parameter")
    func addedWithDefault() throws {
        let statements = try Self.statements(
            [Self.note([AttributeDescription(name: "title", type: .string)])],
            [Self.note([AttributeDescription(name: "title", type: .string),
                        AttributeDescription(name: "priority", type: .int64, defaultValue: .int(3))])])
        let setting = try #require(statements.first { $0.sql.contains("pgmodel.migration_default") && $0.sql.hasPrefix("SELECT") })
        #expect(setting.binds == [.int(3)])
        #expect(statements.contains { $0.sql.contains("ADD COLUMN IF NOT EXISTS \"priority\" bigint NOT NULL DEFAULT %L::bigint") })
        #expect(statements.allSatisfy { !$0.sql.contains("3::bigint") })
    }

    @Test("optional → non-optional fills NULLs with the default before SET NOT NULL; the reverse drops NOT NULL")
    func nullability() throws {
        let statements = try Self.statements(
            [Self.note([AttributeDescription(name: "rating", type: .int64, isOptional: true),
                        AttributeDescription(name: "title", type: .string)])],
            [Self.note([AttributeDescription(name: "rating", type: .int64, defaultValue: .int(0)),
                        AttributeDescription(name: "title", type: .string, isOptional: true)])])
        let sql = statements.map(\.sql)
        let fill = try #require(sql.firstIndex { $0.hasPrefix("UPDATE \"app\".\"note\" SET \"rating\" = $1 WHERE \"rating\" IS NULL") })
        let notNull = try #require(sql.firstIndex(of: "ALTER TABLE \"app\".\"note\" ALTER COLUMN \"rating\" SET NOT NULL"))
        #expect(fill < notNull)
        #expect(statements[fill].binds == [.int(0)])
        #expect(sql.contains("ALTER TABLE \"app\".\"note\" ALTER COLUMN \"title\" DROP NOT NULL"))
    }

    @Test("removed attributes, constraints and indexes are dropped; new ones created")
    func dropsAndConstraints() throws {
        let sql = try Self.statements(
            [Self.note([AttributeDescription(name: "title", type: .string, isUnique: true), AttributeDescription(name: "old", type: .bool)],
                       indexes: [["old"]])],
            [Self.note([AttributeDescription(name: "title", type: .string), AttributeDescription(name: "body", type: .string)],
                       unique: [["title", "body"]], indexes: [["title"]])]).map(\.sql)
        #expect(sql.contains("ALTER TABLE \"app\".\"note\" DROP CONSTRAINT IF EXISTS \"note_title_key\""))
        #expect(sql.contains("DROP INDEX IF EXISTS \"app\".\"note_title_unowned_key\""))
        #expect(sql.contains("DROP INDEX IF EXISTS \"app\".\"note_old_idx\""))
        #expect(sql.contains("ALTER TABLE \"app\".\"note\" DROP COLUMN IF EXISTS \"old\" CASCADE"))
        #expect(sql.contains { $0.contains("note_title_body_key") && $0.contains("UNIQUE (\"owner_id\", \"title\", \"body\")") })
        #expect(sql.contains("CREATE INDEX IF NOT EXISTS \"note_title_idx\" ON \"app\".\"note\" (\"title\")"))
    }

    @Test("a to-many becoming many-to-many copies its pairs into the join table, then drops the foreign key")
    func toManyBecomesManyToMany() throws {
        let tag = { (relationship: RelationshipDescription) in
            EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "label", type: .string)], relationships: [relationship])
        }
        let old = [Self.note([AttributeDescription(name: "title", type: .string)],
                             relationships: [RelationshipDescription(name: "tags", destination: "Tag", isToMany: true, isOptional: true, inverse: "note")]),
                   tag(RelationshipDescription(name: "note", destination: "Note", isToMany: false, isOptional: true, inverse: "tags"))]
        let new = [Self.note([AttributeDescription(name: "title", type: .string)],
                             relationships: [RelationshipDescription(name: "tags", destination: "Tag", isToMany: true, isOptional: true, inverse: "notes")]),
                   tag(RelationshipDescription(name: "notes", destination: "Note", isToMany: true, isOptional: true, inverse: "tags"))]
        let sql = try Self.statements(old, new).map(\.sql)
        let copy = try #require(sql.firstIndex { $0.hasPrefix("INSERT INTO \"app\".\"note_tags\"") && $0.contains("FROM \"app\".\"tag\" WHERE \"note_id\" IS NOT NULL") })
        let drop = try #require(sql.firstIndex(of: "ALTER TABLE \"app\".\"tag\" DROP COLUMN IF EXISTS \"note_id\" CASCADE"))
        #expect(copy < drop)
    }

    @Test("a class moving into another hierarchy is not lightweight")
    func hierarchyMove() {
        let old = [Self.note([AttributeDescription(name: "title", type: .string)]),
                   EntityDescription(name: "Memo", attributes: [AttributeDescription(name: "text", type: .string)])]
        let new = [Self.note([AttributeDescription(name: "title", type: .string)]),
                   EntityDescription(name: "Memo", attributes: [AttributeDescription(name: "text", type: .string)], superentity: "Note")]
        let error = #expect(throws: PGModelError.self) { try Self.statements(old, new) }
        #expect(error?.message.contains("Memo moves from the class hierarchy of Memo to that of Note") == true)
    }
}
