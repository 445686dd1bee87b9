import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import Testing

/// What a registration compares with existing tables before it runs DDL: the columns the models need,
/// and the differences that would make the first insert fail.
@Suite("Table shape")
struct TableShapeTests {
    static let trip = EntityDescription(
        name: "Trip",
        attributes: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "startDate", type: .date),
            AttributeDescription(name: "notes", type: .string, isOptional: true),
        ])

    static let canonical: [String: String] = ["uuid": "uuid", "text": "text", "timestamptz": "timestamp with time zone"]

    func needed() throws -> [ModelColumn] {
        try SQLRenderer(schema: SchemaDescription(entities: [Self.trip]), schemaName: "app").requiredColumns(ofTablesOf: ["Trip"])
    }

    func catalog(_ extra: [CatalogColumn] = [], replacing: [String: CatalogColumn] = [:]) -> [CatalogColumn] {
        let base = [
            CatalogColumn(table: "trip", column: "id", type: "uuid", isNotNull: true, hasDefault: false),
            CatalogColumn(table: "trip", column: "entity", type: "text", isNotNull: true, hasDefault: false),
            CatalogColumn(table: "trip", column: "owner_id", type: "uuid", isNotNull: false, hasDefault: false),
            CatalogColumn(table: "trip", column: "name", type: "text", isNotNull: true, hasDefault: false),
            CatalogColumn(table: "trip", column: "start_date", type: "timestamp with time zone", isNotNull: true, hasDefault: false),
            CatalogColumn(table: "trip", column: "notes", type: "text", isNotNull: false, hasDefault: false),
        ]
        return base.map { replacing[$0.column] ?? $0 } + extra
    }

    func differences(_ existing: [CatalogColumn], rows: Set<String> = []) throws -> [String] {
        SQLRenderer.shapeDifferences(needed: try needed(), existing: existing, canonicalType: { Self.canonical[$0] ?? $0 },
                                     tablesWithRows: rows).flatMap { entry in entry.differences.map { "\(entry.table): \($0)" } }
    }

    @Test func theColumnsTheDDLWrites() throws {
        let columns = try needed()
        #expect(columns.map(\.column) == ["id", "entity", "owner_id", "name", "start_date", "notes"])
        #expect(columns.map(\.isRequired) == [true, true, false, true, true, false])
        #expect(columns.first { $0.column == "start_date" }?.storedBy == "Trip.startDate")
    }

    @Test func aTableTheDDLMadeFits() throws {
        #expect(try differences(catalog()).isEmpty)
        #expect(try differences([]).isEmpty, "a table that does not exist yet is created, not compared")
        // An optional column the models do not store, and a NOT NULL one with a default, hurt no insert.
        let harmless = [CatalogColumn(table: "trip", column: "legacy", type: "integer", isNotNull: false, hasDefault: false),
                        CatalogColumn(table: "trip", column: "created", type: "timestamp with time zone", isNotNull: true, hasDefault: true)]
        #expect(try differences(catalog(harmless)).isEmpty)
        // A new optional column, or a required one on an empty table, is added.
        #expect(try differences(catalog().filter { $0.column != "notes" && $0.column != "start_date" }).isEmpty)
    }

    @Test func anotherAppsTableIsNamedWithEveryDifference() throws {
        let existing = catalog([CatalogColumn(table: "trip", column: "end_date", type: "timestamp with time zone", isNotNull: true, hasDefault: false)],
                               replacing: ["start_date": CatalogColumn(table: "trip", column: "start_date", type: "text", isNotNull: true, hasDefault: false),
                                           "notes": CatalogColumn(table: "trip", column: "notes", type: "text", isNotNull: true, hasDefault: false)])
        #expect(try differences(existing) == [
            "trip: \"start_date\" is text, but Trip.startDate needs timestamp with time zone",
            "trip: \"notes\" is NOT NULL, but Trip.notes may be nil",
            "trip: \"end_date\" is NOT NULL, has no default, and no property stores it",
        ])
    }

    @Test func aRequiredColumnCannotBeAddedToATableWithRows() throws {
        let existing = catalog().filter { $0.column != "start_date" }
        #expect(try differences(existing).isEmpty)
        #expect(try differences(existing, rows: ["trip"]) == [
            "trip: \"start_date\" is missing, and Trip.startDate needs it in every row, but the table has rows",
        ])
    }

    @Test func joinTablesAreCompared() throws {
        let tag = EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "label", type: .string)],
                                    relationships: [RelationshipDescription(name: "trips", destination: "Trip", isToMany: true, inverse: "tags")])
        var trip = Self.trip
        trip.relationships = [RelationshipDescription(name: "tags", destination: "Tag", isToMany: true, inverse: "trips")]
        let renderer = try SQLRenderer(schema: SchemaDescription(entities: [trip, tag]), schemaName: "app")
        let needed = renderer.requiredColumns(ofTablesOf: ["Trip"])
        let joins = needed.filter { $0.table != "trip" && $0.table != "tag" }
        #expect(joins.count == 2)
        #expect(joins.allSatisfy { $0.type == "uuid" && $0.isRequired })
    }
}
