import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL
import Testing

/// `#Index` kinds in SQL: a binary index is the B-tree it always was, under the name it always had; an
/// rtree index is GiST (through `btree_gist`) under a name of its own, so a changed kind migrates.
@Suite("SQL renderer: index kinds")
struct IndexSQLTests {
    static let attributes = [
        AttributeDescription(name: "name", type: .string),
        AttributeDescription(name: "latitude", type: .double),
        AttributeDescription(name: "longitude", type: .double, isOptional: true),
        AttributeDescription(name: "visitedAt", type: .date, isOptional: true),
        AttributeDescription(name: "rank", type: .int64),
        AttributeDescription(name: "price", type: .decimal),
        AttributeDescription(name: "isOpen", type: .bool),
    ]

    static func place(_ indexes: [IndexDescription]) -> EntityDescription {
        EntityDescription(name: "Place", attributes: attributes, indexes: indexes)
    }

    static func ddl(_ indexes: [IndexDescription]) throws -> [String] {
        try SQLRenderer(schema: SchemaDescription(entities: [place(indexes)]), schemaName: "app").createStatements()
    }

    static func migration(_ old: [IndexDescription], _ new: [IndexDescription]) throws -> [String] {
        try SQLRenderer(schema: SchemaDescription(entities: [place(new)]), schemaName: "app")
            .migrationStatements(from: SchemaDescription(entities: [place(old)])).map(\.sql)
    }

    static let btreeGist = """
        DO $pgmodel$ DECLARE ext_schema text; BEGIN \
        IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'btree_gist') THEN \
        SELECT n.nspname INTO ext_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pgcrypto'; \
        IF ext_schema IS NULL THEN CREATE EXTENSION btree_gist; \
        ELSE EXECUTE format('CREATE EXTENSION btree_gist SCHEMA %I', ext_schema); END IF; \
        END IF; \
        EXCEPTION \
        WHEN insufficient_privilege THEN \
        RAISE EXCEPTION 'an rtree index (#Index .rtree) needs the PostgreSQL extension btree_gist, which this role may not create' \
        USING ERRCODE = 'insufficient_privilege', HINT = 'run CREATE EXTENSION btree_gist; in this database as its owner or a superuser'; \
        WHEN undefined_file OR undefined_object OR feature_not_supported THEN \
        RAISE EXCEPTION 'an rtree index (#Index .rtree) needs the PostgreSQL extension btree_gist, which this server does not have: install the PostgreSQL contrib package (postgresql-contrib)' \
        USING ERRCODE = 'undefined_object'; \
        END $pgmodel$
        """

    @Test("DDL: .binary is a B-tree named …_idx, .rtree is GiST named …_gist, after btree_gist is created once")
    func ddlSnapshot() throws {
        let sql = try Self.ddl([["name"], IndexDescription(["latitude", "longitude"], kind: .rtree),
                                IndexDescription(["visitedAt", "rank", "price"], kind: .rtree), ["latitude", "longitude"]])
        #expect(Array(sql.prefix(2)) == [#"CREATE SCHEMA IF NOT EXISTS "app""#, Self.btreeGist])
        #expect(sql.filter { $0.contains("btree_gist") }.count == 1)
        let indexes = sql.filter { $0.hasPrefix("CREATE INDEX") }
        #expect(indexes == [
            #"CREATE INDEX IF NOT EXISTS "place_owner_id_idx" ON "app"."place" ("owner_id")"#,
            #"CREATE INDEX IF NOT EXISTS "place_name_idx" ON "app"."place" ("name")"#,
            #"CREATE INDEX IF NOT EXISTS "place_latitude_longitude_gist" ON "app"."place" USING gist ("latitude", "longitude")"#,
            #"CREATE INDEX IF NOT EXISTS "place_visited_at_rank_price_gist" ON "app"."place" USING gist ("visited_at", "rank", "price")"#,
            #"CREATE INDEX IF NOT EXISTS "place_latitude_longitude_idx" ON "app"."place" ("latitude", "longitude")"#,
        ])
        // The extension comes before the first table, so the gist indexes always find it.
        let table = try #require(sql.firstIndex { $0.hasPrefix("CREATE TABLE") })
        #expect(try #require(sql.firstIndex(of: Self.btreeGist)) < table)
    }

    @Test("DDL: a schema without rtree indexes never asks for btree_gist, and binary indexes keep their names")
    func binaryOnly() throws {
        let sql = try Self.ddl([["name"], ["latitude", "longitude"]])
        #expect(!sql.contains { $0.contains("btree_gist") || $0.contains("gist") })
        #expect(sql.contains(#"CREATE INDEX IF NOT EXISTS "place_latitude_longitude_idx" ON "app"."place" ("latitude", "longitude")"#))
    }

    @Test("DDL of one entity asks for btree_gist when its hierarchy has an rtree index")
    func oneEntity() throws {
        let place = Self.place([IndexDescription(["latitude"], kind: .rtree)])
        let renderer = try SQLRenderer(schema: SchemaDescription(entities: [place]), schemaName: "app")
        let sql = renderer.createStatements(for: place)
        #expect(sql[1] == Self.btreeGist)
        #expect(sql.contains(#"CREATE INDEX IF NOT EXISTS "place_latitude_gist" ON "app"."place" USING gist ("latitude")"#))
        #expect(renderer.indexName("place", ["latitude"], kind: .rtree) == "place_latitude_gist")
        #expect(renderer.indexName("place", ["latitude"], kind: .binary) == "place_latitude_idx")
    }

    @Test("migration: a changed kind drops the old index and creates the new one; the reverse too")
    func kindChangeMigrates() throws {
        let binary: [IndexDescription] = [["latitude", "longitude"]]
        let rtree = [IndexDescription(["latitude", "longitude"], kind: .rtree)]
        let up = try Self.migration(binary, rtree)
        let drop = try #require(up.firstIndex(of: #"DROP INDEX IF EXISTS "app"."place_latitude_longitude_idx""#))
        let create = try #require(up.firstIndex(of: #"CREATE INDEX IF NOT EXISTS "place_latitude_longitude_gist" ON "app"."place" USING gist ("latitude", "longitude")"#))
        let gist = try #require(up.firstIndex(of: Self.btreeGist))
        #expect(drop < gist && gist < create)
        #expect(!up.contains { $0.hasPrefix("CREATE INDEX") && $0.contains("place_latitude_longitude_idx") })

        let down = try Self.migration(rtree, binary)
        #expect(down.contains(#"DROP INDEX IF EXISTS "app"."place_latitude_longitude_gist""#))
        #expect(down.contains(#"CREATE INDEX IF NOT EXISTS "place_latitude_longitude_idx" ON "app"."place" ("latitude", "longitude")"#))
        #expect(!down.contains { $0.contains("USING gist") || $0.contains("btree_gist") })
    }

    @Test("migration: unchanged indexes, binary and rtree, are neither dropped nor renamed")
    func unchangedIndexesStay() throws {
        let indexes: [IndexDescription] = [["name"], IndexDescription(["latitude", "longitude"], kind: .rtree)]
        let sql = try Self.migration(indexes, indexes)
        #expect(!sql.contains { $0.hasPrefix("DROP INDEX") })
        // A store registered before index kinds existed decodes to the same binary indexes.
        let registered = try JSONDecoder().decode(EntityDescription.self, from: Data(
            #"{"name":"Place","tableName":"place","attributes":[{"name":"name","columnName":"name","type":"string"}],"indexes":[["name"]]}"#.utf8))
        #expect(registered.indexes == [IndexDescription(["name"], kind: .binary)])
        let declared = EntityDescription(name: "Place", attributes: [AttributeDescription(name: "name", type: .string)], indexes: [["name"]])
        #expect(registered.shape == declared.shape)
        #expect(SchemaDescription(entities: [registered]).firstDifference(registering: SchemaDescription(entities: [declared])) == nil)
    }

    @Test("a changed kind is a different shape, with its own difference, and a different fingerprint input")
    func kindIsPartOfTheShape() throws {
        let binary = Self.place([["latitude", "longitude"]])
        let rtree = Self.place([IndexDescription(["latitude", "longitude"], kind: .rtree)])
        #expect(binary.shape != rtree.shape)
        let difference = SchemaDescription(entities: [binary]).firstDifference(registering: SchemaDescription(entities: [rtree]))
        #expect(difference?.description == "Place is registered with other index kinds")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let binaryJSON = String(decoding: try encoder.encode(binary.shape), as: UTF8.self)
        let rtreeJSON = String(decoding: try encoder.encode(rtree.shape), as: UTF8.self)
        #expect(binaryJSON.contains(#""indexes":[["latitude","longitude"]]"#))
        #expect(rtreeJSON.contains(#""indexes":[{"attributes":["latitude","longitude"],"kind":"rtree"}]"#))
        #expect(try JSONDecoder().decode(EntityDescription.self, from: Data(rtreeJSON.utf8)) == rtree.shape)
    }

    @Test("validation: an rtree index covers numbers and dates only, and no index is empty")
    func validation() throws {
        try SchemaDescription(entities: [Self.place([IndexDescription(["latitude", "longitude", "visitedAt", "rank", "price"], kind: .rtree)])]).validate()
        for (name, what) in [("name", "a string attribute"), ("isOpen", "a bool attribute")] {
            let error = try #require(throws: PGModelError.self) {
                try SchemaDescription(entities: [Self.place([IndexDescription(["latitude", name], kind: .rtree)])]).validate()
            }
            #expect(error.code == .invalidSchema)
            #expect(error.keyPath == name)
            #expect(error.message == "the rtree index on Place names '\(name)', \(what); an rtree index (a PostgreSQL GiST index) covers numeric and date attributes only, so index '\(name)' with .binary([\\.\(name)]) instead")
        }
        let empty = try #require(throws: PGModelError.self) {
            try SchemaDescription(entities: [Self.place([[]])]).validate()
        }
        #expect(empty.code == .invalidSchema)
        // A to-one relationship may be in a binary index (its foreign key), never in an rtree one.
        let album = EntityDescription(name: "Album", attributes: [AttributeDescription(name: "title", type: .string)])
        func track(_ kind: IndexDescription.Kind) -> EntityDescription {
            EntityDescription(name: "Track", attributes: [AttributeDescription(name: "title", type: .string)],
                              indexes: [IndexDescription(["album"], kind: kind)],
                              relationships: [RelationshipDescription(name: "album", destination: "Album", isToMany: false)])
        }
        try SchemaDescription(entities: [album, track(.binary)]).validate()
        let relationship = try #require(throws: PGModelError.self) {
            try SchemaDescription(entities: [album, track(.rtree)]).validate()
        }
        #expect(relationship.message.contains("'album', a relationship"))
    }
}
