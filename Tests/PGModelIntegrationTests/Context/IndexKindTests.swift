import Foundation
import Logging
@_spi(PGModelInternals) import PGModel
import PostgresNIO
import Testing
import PGModelTesting

/// A map pin with SwiftData's index kinds: a B-tree on the name, an R-tree (GiST) on the coordinates.
@Model final class MapPin {
    #Index<MapPin>(.binary([\.name]), .rtree([\.latitude, \.longitude]))
    var name: String
    var latitude: Double
    var longitude: Double

    init(name: String, latitude: Double, longitude: Double) {
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// The same coordinates indexed by a B-tree, then by an R-tree: a lightweight migration changes the kind.
enum IndexedPinsV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [IndexedPinsV1.Pin.self] }

    @Model final class Pin {
        #Index<Pin>([\.latitude, \.longitude])
        var latitude: Double
        var longitude: Double
        init(latitude: Double, longitude: Double) { self.latitude = latitude; self.longitude = longitude }
    }
}

enum IndexedPinsV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [IndexedPinsV2.Pin.self] }

    @Model final class Pin {
        #Index<Pin>(.rtree([\.latitude, \.longitude]))
        var latitude: Double
        var longitude: Double
        init(latitude: Double, longitude: Double) { self.latitude = latitude; self.longitude = longitude }
    }
}

enum IndexedPinsPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [IndexedPinsV1.self, IndexedPinsV2.self] }
    static var stages: [MigrationStage] { [.lightweight(fromVersion: IndexedPinsV1.self, toVersion: IndexedPinsV2.self)] }
}

@Suite("#Index kinds on PostgreSQL")
struct IndexKindTests {
    /// `pg_indexes` of `table` in `schema`: name → definition.
    static func indexes(_ schema: String, _ table: String) async throws -> [String: String] {
        let rows = try await Inspect.strings("SELECT indexname || ' ' || indexdef FROM pg_indexes WHERE schemaname = '\(schema)' AND tablename = '\(table)' ORDER BY 1")
        var result: [String: String] = [:]
        for row in rows {
            let parts = row.split(separator: " ", maxSplits: 1).map(String.init)
            if parts.count == 2 { result[parts[0]] = parts[1] }
        }
        return result
    }

    @Test(".rtree is a GiST index and .binary a B-tree; fetches over both return the right rows")
    func gistAndBtree() async throws {
        let schema = TestDatabase.uniqueSchema("idx")
        let url = try TestDatabase.schemaURL(schema)
        let container = try await offCooperativePool {
            try ModelContainer(for: MapPin.self, configurations: ModelConfiguration(url: url))
        }
        // A 40 × 50 grid of pins, one per whole degree.
        try await offCooperativePool {
            let context = ModelContext(container)
            for latitude in 0..<40 {
                for longitude in 0..<50 {
                    context.insert(MapPin(name: "pin \(latitude)/\(longitude)", latitude: Double(latitude), longitude: Double(longitude)))
                }
            }
            try context.save()
        }

        let indexes = try await Self.indexes(schema, "map_pin")
        let gist = try #require(indexes["map_pin_latitude_longitude_gist"])
        #expect(gist.contains("USING gist (latitude, longitude)"))
        let btree = try #require(indexes["map_pin_name_idx"])
        #expect(btree.contains("USING btree (name)"))
        #expect(try await Inspect.count("SELECT count(*) FROM pg_extension WHERE extname = 'btree_gist'") == 1)

        // A box of coordinates (the R-tree's query) and a name (the B-tree's).
        let (box, named, east) = try await offCooperativePool {
            let context = ModelContext(container)
            let (south, north, west, east): (Double, Double, Double, Double) = (10, 12, 20.5, 24)
            let inBox: Predicate<MapPin> = #Predicate { pin in
                pin.latitude >= south && pin.latitude <= north && pin.longitude > west && pin.longitude < east
            }
            let box = try context.fetch(FetchDescriptor<MapPin>(predicate: inBox, sortBy: [SortDescriptor(\.latitude), SortDescriptor(\.longitude)]))
                .map { "\(Int($0.latitude))/\(Int($0.longitude))" }
            let named = try context.fetch(FetchDescriptor<MapPin>(predicate: #Predicate { $0.name == "pin 7/3" })).map(\.name)
            // The second column alone: a B-tree on (latitude, longitude) would have to read it all.
            let farEast = try context.fetchCount(FetchDescriptor<MapPin>(predicate: #Predicate { $0.longitude >= 48 }))
            return (box, named, farEast)
        }
        #expect(box == ["10/21", "10/22", "10/23", "11/21", "11/22", "11/23", "12/21", "12/22", "12/23"])
        #expect(named == ["pin 7/3"])
        #expect(east == 80)

        // PostgreSQL can answer a range on the second column from the GiST index.
        let plan = try await Inspect.withConnection { connection in
            _ = try await connection.query(PostgresQuery(unsafeSQL: "SET enable_seqscan = off"), logger: Logger(label: "inspect"))
            var lines: [String] = []
            let rows = try await connection.query(PostgresQuery(unsafeSQL: "EXPLAIN SELECT id FROM \"\(schema)\".map_pin WHERE longitude >= 48"),
                                                  logger: Logger(label: "inspect"))
            for try await row in rows { lines.append(try row.decode(String.self)) }
            return lines.joined(separator: "\n")
        }
        #expect(plan.contains("map_pin_latitude_longitude_gist"))

        await container.close()
        try await Inspect.drop(schema)
    }

    @Test("through the service: the rtree kind crosses the wire, and a user's box fetch works")
    func throughTheService() async throws {
        let f = try await StoreFixture.make(.service, [MapPin.self])
        let box = try await offCooperativePool {
            let context = f.newContext()
            for i in 0..<20 { context.insert(MapPin(name: "\(f.token) \(i)", latitude: Double(i), longitude: Double(i) / 2)) }
            try context.save()
            let (south, north, west, east): (Double, Double, Double, Double) = (5, 9, 3, 4)
            let inBox: Predicate<MapPin> = #Predicate { pin in
                pin.latitude >= south && pin.latitude <= north && pin.longitude >= west && pin.longitude <= east
            }
            return try context.fetch(FetchDescriptor<MapPin>(predicate: inBox, sortBy: [SortDescriptor(\.latitude)])).map { Int($0.latitude) }
        }
        #expect(box == [6, 7, 8])
        // The server registered the kind it was sent, and created the GiST index from it (service schemas
        // only: the direct tests' schemas come and go in parallel).
        let registered = try await Inspect.strings("""
            SELECT schema_name FROM pgmodel.entities WHERE name = 'MapPin' AND schema_name LIKE 'svc\\_%' \
            AND description->'indexes' @> '[{"kind":"rtree","attributes":["latitude","longitude"]}]'::jsonb \
            AND description->'indexes' @> '[["name"]]'::jsonb
            """)
        #expect(!registered.isEmpty)
        for schema in registered {
            let indexes = try await Self.indexes(schema, "map_pin")
            #expect(indexes["map_pin_latitude_longitude_gist"]?.contains("USING gist (latitude, longitude)") == true)
            #expect(indexes["map_pin_name_idx"]?.contains("USING btree (name)") == true)
        }
        await f.container.close()
    }

    @Test("a lightweight migration from .binary to .rtree replaces the B-tree with a GiST index and keeps the rows")
    func kindChangeMigrates() async throws {
        let schema = TestDatabase.uniqueSchema("idx")
        let url = try TestDatabase.schemaURL(schema)
        let v1 = try await offCooperativePool {
            let container = try ModelContainer(for: Schema(versionedSchema: IndexedPinsV1.self), migrationPlan: IndexedPinsPlan.self,
                                               configurations: ModelConfiguration(url: url))
            let context = ModelContext(container)
            for i in 0..<10 { context.insert(IndexedPinsV1.Pin(latitude: Double(i), longitude: Double(-i))) }
            try context.save()
            return container
        }
        await v1.close()
        var indexes = try await Self.indexes(schema, "pin")
        #expect(indexes["pin_latitude_longitude_idx"]?.contains("USING btree (latitude, longitude)") == true)
        #expect(indexes["pin_latitude_longitude_gist"] == nil)

        let v2 = try await offCooperativePool {
            try ModelContainer(for: Schema(versionedSchema: IndexedPinsV2.self), migrationPlan: IndexedPinsPlan.self,
                               configurations: ModelConfiguration(url: url))
        }
        let count = try await offCooperativePool {
            try ModelContext(v2).fetchCount(FetchDescriptor<IndexedPinsV2.Pin>(predicate: #Predicate { $0.latitude >= 5 && $0.longitude <= -5 }))
        }
        #expect(count == 5)
        await v2.close()
        indexes = try await Self.indexes(schema, "pin")
        #expect(indexes["pin_latitude_longitude_idx"] == nil)
        #expect(indexes["pin_latitude_longitude_gist"]?.contains("USING gist (latitude, longitude)") == true)
        let versions = try await Inspect.strings("SELECT version FROM pgmodel.schema_versions WHERE schema_name = '\(schema)' AND fingerprint IS NOT NULL ORDER BY id")
        #expect(versions.last == "2.0.0")
        try await Inspect.drop(schema)
    }
}
