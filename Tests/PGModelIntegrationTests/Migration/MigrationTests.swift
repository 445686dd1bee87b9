import Foundation
import Logging
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelCore
import PostgresNIO
import Testing
import PGModelTesting

/// Schema migrations on a real PostgreSQL store: the seed's SampleTrips plan V1 → V4 on a populated
/// store, failures that leave everything as it was, an older app against a newer store, two processes
/// at once, a lightweight plan over every kind of change, the dry run and the service.
@Suite("Schema migrations")
struct MigrationTests {
    typealias V1 = SampleTripsSchemaV1
    typealias V2 = SampleTripsSchemaV2
    typealias V3 = SampleTripsSchemaV3
    typealias V4 = SampleTripsSchemaV4

    static let base = Date(timeIntervalSince1970: 1_750_000_000.123456)

    /// A V1 store made before the app adopted VersionedSchema: 6 trips, two of them duplicates by name
    /// (one also by dates), with bucket lists and accommodations.
    static func populatedV1Store() async throws -> (url: URL, schema: String) {
        let schema = TestDatabase.uniqueSchema("mig")
        let url = try TestDatabase.schemaURL(schema)
        try await offCooperativePool {
            let container = try ModelContainer(for: V1.Trip.self, V1.BucketListItem.self, V1.LivingAccommodation.self,
                                               configurations: ModelConfiguration(url: url))
            let context = ModelContext(container)
            for (i, name) in ["Paris", "Rome", "Paris", "Oslo", "Rome", "Lima"].enumerated() {
                let trip = V1.Trip(name: name, destination: "to \(name) #\(i)",
                                   start_date: base.addingTimeInterval(Double(i) * 86_400), end_date: base.addingTimeInterval(Double(i) * 86_400 + 3_600))
                context.insert(trip)
                trip.bucketList = [V1.BucketListItem(title: "see \(name) \(i)"), V1.BucketListItem(title: "eat \(name) \(i)")]
                trip.livingAccommodation = V1.LivingAccommodation(address: "\(i) \(name) street")
            }
            try context.save()
        }
        return (url, schema)
    }

    static func open<Plan: SchemaMigrationPlan>(_ versioned: any VersionedSchema.Type, _ plan: Plan.Type, at url: URL) async throws -> ModelContainer {
        try await offCooperativePool {
            try ModelContainer(for: Schema(versionedSchema: versioned), migrationPlan: plan, configurations: ModelConfiguration(url: url))
        }
    }

    @Test("the seed's plan V1 → V2 → V3 → V4 on a populated store keeps every row it should")
    func seedPlan() async throws {
        let (url, schema) = try await Self.populatedV1Store()

        let v2 = try await Self.open(V2.self, SampleTripsPlanThroughV2.self, at: url)
        let v2Trips = try await offCooperativePool {
            try ModelContext(v2).fetch(FetchDescriptor<V2.Trip>(sortBy: [SortDescriptor(\.startDate)])).map {
                ($0.name, $0.destination, $0.startDate, $0.endDate, $0.bucketList?.count ?? -1, $0.livingAccommodation?.address ?? "")
            }
        }
        // The first of each name is kept, with its renamed dates, its items and its accommodation.
        #expect(v2Trips.map(\.0) == ["Paris", "Rome", "Oslo", "Lima"])
        #expect(v2Trips.map(\.1) == ["to Paris #0", "to Rome #1", "to Oslo #3", "to Lima #5"])
        #expect(v2Trips[0].2 == Self.base)
        #expect(v2Trips[1].3 == Self.base.addingTimeInterval(86_400 + 3_600))
        #expect(v2Trips.map(\.4) == [2, 2, 2, 2])
        #expect(v2Trips[2].5 == "3 Oslo street")
        // The deleted duplicates' items went with them (.cascade); nothing else was lost.
        #expect(try await Inspect.count("SELECT count(*) FROM \(schema).bucket_list_item") == 8)
        #expect(try await Inspect.count("SELECT count(*) FROM \(schema).living_accommodation") == 4)
        // V2's uniqueness now holds in PostgreSQL.
        await #expect(throws: PGModelError.self) {
            try await offCooperativePool {
                let context = ModelContext(v2)
                context.insert(V2.Trip(name: "Lima", destination: "again", startDate: .now, endDate: .now))
                try context.save()
                // An insert that matches a unique value is SwiftData's upsert: read it back to see which.
                if try context.fetchCount(FetchDescriptor<V2.Trip>()) == 4 { throw PGModelError(.uniqueViolation, "upserted") }
            }
        }
        await v2.close()

        let v3 = try await Self.open(V3.self, SampleTripsPlanThroughV3.self, at: url)
        let v3Count = try await offCooperativePool { try ModelContext(v3).fetchCount(FetchDescriptor<V3.Trip>()) }
        #expect(v3Count == 4)
        // V3 drops V2's single-column key and adds the composite one and four indexes.
        let constraints = try await Inspect.strings("SELECT conname FROM pg_constraint WHERE conrelid = '\(schema).trip'::regclass AND contype = 'u' ORDER BY 1")
        #expect(constraints == ["trip_name_start_date_end_date_key"])
        let indexes = try await Inspect.strings("SELECT indexname FROM pg_indexes WHERE schemaname = '\(schema)' AND tablename = 'trip' ORDER BY 1")
        #expect(indexes.contains("trip_name_start_date_end_date_idx"))
        #expect(indexes.contains("trip_start_date_idx"))
        #expect(!indexes.contains("trip_name_unowned_key"))
        await v3.close()

        let v4 = try await Self.open(V4.self, SampleTripsMigrationPlan.self, at: url)
        try await offCooperativePool {
            let context = ModelContext(v4)
            let trips = try context.fetch(FetchDescriptor<V4.Trip>(sortBy: [SortDescriptor(\.startDate)]))
            #expect(trips.map(\.name) == ["Paris", "Rome", "Oslo", "Lima"])
            #expect(trips.allSatisfy { !($0 is V4.BusinessTrip) })
            context.insert(V4.BusinessTrip(name: "Summit", destination: "Geneva", startDate: Self.base, endDate: Self.base, perdiem: 120))
            context.insert(V4.PersonalTrip(name: "Home", destination: "Lyon", startDate: Self.base, endDate: Self.base, reason: .family))
            try context.save()
            let business = try context.fetch(FetchDescriptor<V4.Trip>(predicate: #Predicate { $0 is V4.BusinessTrip }))
            #expect(business.count == 1)
            #expect((business.first as? V4.BusinessTrip)?.perdiem == 120)
        }
        await v4.close()

        // Every step is recorded, with its stages; reopening runs nothing.
        let versions = try await Inspect.strings("SELECT version FROM pgmodel.schema_versions WHERE schema_name = '\(schema)' AND fingerprint IS NOT NULL ORDER BY id")
        #expect(versions == ["2.0.0", "3.0.0", "4.0.0"])
        let reopened = try await Self.open(V4.self, SampleTripsMigrationPlan.self, at: url)
        await reopened.close()
        #expect(try await Inspect.count("SELECT count(*) FROM pgmodel.schema_versions WHERE schema_name = '\(schema)' AND fingerprint IS NOT NULL") == 3)
        try await Inspect.drop(schema)
    }

    @Test("pgmodel schema shows the store's version history with each migration's stages")
    func schemaCommand() async throws {
        let (url, schema) = try await Self.populatedV1Store()
        let v2 = try await Self.open(V2.self, SampleTripsPlanThroughV2.self, at: url)
        await v2.close()
        let result = try await ShareCommandTests.run(["schema", "--database-url", try TestDatabase.url(), "--schema", schema])
        #expect(result.status == 0)
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "schema \(schema): 2 versions")
        #expect(lines.contains { $0.hasPrefix("1.0.0") && $0.contains("registered") })
        #expect(lines.contains { $0.hasPrefix("2.0.0") && $0.contains("migrated") && $0.contains("BucketListItem, LivingAccommodation, Trip") })
        #expect(lines.contains { $0.contains("custom 1.0.0 → 2.0.0") && $0.contains("Trip=4") })
        let json = try await ShareCommandTests.run(["schema", "--json", "--database-url", try TestDatabase.url(), "--schema", schema])
        #expect(json.status == 0)
        #expect(json.output.contains("\"fingerprint\""))
        try await Inspect.drop(schema)
    }

    @Test("an unversioned V1 store goes to V4 in one plan: every stage in one transaction")
    func wholePlanAtOnce() async throws {
        let (url, schema) = try await Self.populatedV1Store()
        let v4 = try await Self.open(V4.self, SampleTripsMigrationPlan.self, at: url)
        let names = try await offCooperativePool {
            try ModelContext(v4).fetch(FetchDescriptor<V4.Trip>(sortBy: [SortDescriptor(\.startDate)])).map(\.name)
        }
        #expect(names == ["Paris", "Rome", "Oslo", "Lima"])
        await v4.close()
        let stages = try await Inspect.strings("SELECT stages::text FROM pgmodel.schema_versions WHERE schema_name = '\(schema)' AND fingerprint IS NOT NULL")
        #expect(stages.count == 1)
        // One version row for the whole plan, listing its three stages.
        #expect(stages.first.map { ["1.0.0", "2.0.0", "3.0.0", "4.0.0"].allSatisfy($0.contains) } == true)
        #expect(stages.first.map { $0.components(separatedBy: "milliseconds").count - 1 } == 3)
        try await Inspect.drop(schema)
    }

    @Test("a willMigrate that throws rolls back everything, its own saves included")
    func failingStage() async throws {
        let (url, schema) = try await Self.populatedV1Store()
        let before = try await Inspect.strings("SELECT name || '|' || destination FROM \(schema).trip ORDER BY id")
        let columns = try await Inspect.columns(schema, "trip")
        do {
            _ = try await Self.open(V2.self, SampleTripsFailingPlan.self, at: url)
            Issue.record("the migration should have failed")
        } catch let error as PGModelError {
            #expect(error.code == .migrationFailed)
            #expect(error.message.contains("1.0.0 → 2.0.0"))
            #expect(error.message.contains("willMigrate"))
        }
        #expect(try await Inspect.strings("SELECT name || '|' || destination FROM \(schema).trip ORDER BY id") == before)
        #expect(try await Inspect.columns(schema, "trip") == columns)
        #expect(try await Inspect.count("SELECT count(*) FROM pgmodel.schema_versions WHERE schema_name = '\(schema)' AND fingerprint IS NOT NULL") == 0)
        // The store still opens as V1, with all its data.
        let v1 = try await offCooperativePool {
            try ModelContainer(for: V1.Trip.self, V1.BucketListItem.self, V1.LivingAccommodation.self, configurations: ModelConfiguration(url: url))
        }
        #expect(try await offCooperativePool { try ModelContext(v1).fetchCount(FetchDescriptor<V1.Trip>()) } == 6)
        await v1.close()
        try await Inspect.drop(schema)
    }

    @Test("a new uniqueness constraint over duplicates fails the stage and changes nothing")
    func uniqueViolation() async throws {
        let (url, schema) = try await Self.populatedV1Store()
        let columns = try await Inspect.columns(schema, "trip")
        do {
            _ = try await Self.open(V2.self, SampleTripsNaivePlan.self, at: url)
            Issue.record("the migration should have failed")
        } catch let error as PGModelError {
            #expect(error.code == .migrationFailed)
            #expect(error.sqlState == "23505")
            #expect(error.message.contains("lightweight stage 1.0.0 → 2.0.0"))
        }
        #expect(try await Inspect.count("SELECT count(*) FROM \(schema).trip") == 6)
        #expect(try await Inspect.columns(schema, "trip") == columns)
        try await Inspect.drop(schema)
    }

    @Test("an app older than its store gets schema_version_mismatch and changes nothing")
    func olderApp() async throws {
        let (url, schema) = try await Self.populatedV1Store()
        let v2 = try await Self.open(V2.self, SampleTripsPlanThroughV2.self, at: url)
        await v2.close()
        let error = await #expect(throws: PGModelError.self) {
            _ = try await Self.open(V1.self, SampleTripsPlanThroughV2.self, at: url)
        }
        #expect(error?.code == .schemaVersionMismatch)
        // Without a plan too: the V1 app's registration is refused, not applied over V2's tables.
        let plain = await #expect(throws: PGModelError.self) {
            _ = try await offCooperativePool {
                try ModelContainer(for: V1.Trip.self, V1.BucketListItem.self, V1.LivingAccommodation.self, configurations: ModelConfiguration(url: url))
            }
        }
        #expect(plain?.code == .schemaVersionMismatch)
        #expect(try await Inspect.columns(schema, "trip").contains("start_date"))
        try await Inspect.drop(schema)
    }

    @Test("two processes starting the new version at once migrate once")
    func twoProcesses() async throws {
        let (url, schema) = try await Self.populatedV1Store()
        let before = MigrationCalls.shared.count("concurrent")
        async let first = Self.open(V2.self, SampleTripsCountingPlan.self, at: url)
        async let second = Self.open(V2.self, SampleTripsCountingPlan.self, at: url)
        let (a, b) = try await (first, second)
        #expect(MigrationCalls.shared.count("concurrent") - before == 1)
        let destinations = try await offCooperativePool { try ModelContext(b).fetch(FetchDescriptor<V2.Trip>()).map(\.destination) }
        #expect(destinations.count == 4)
        #expect(destinations.allSatisfy { $0.hasSuffix(" (v2)") && !$0.hasSuffix(" (v2) (v2)") })
        await a.close()
        await b.close()
        #expect(try await Inspect.count("SELECT count(*) FROM pgmodel.schema_versions WHERE schema_name = '\(schema)' AND fingerprint IS NOT NULL") == 1)
        try await Inspect.drop(schema)
    }

    @Test("a lightweight plan adds, drops and renames attributes, fills defaults, adds a subclass and a many-to-many")
    func lightweightPlan() async throws {
        let schema = TestDatabase.uniqueSchema("mig")
        let url = try TestDatabase.schemaURL(schema)
        try await offCooperativePool {
            let container = try ModelContainer(for: NotesSchemaV1.Note.self, NotesSchemaV1.Tag.self, configurations: ModelConfiguration(url: url))
            let context = ModelContext(container)
            let first = NotesSchemaV1.Note(title: "groceries", body: "milk", rating: 4)
            let second = NotesSchemaV1.Note(title: "ideas", body: "migrations", rating: nil)
            context.insert(first)
            context.insert(second)
            first.tags = [NotesSchemaV1.Tag(label: "home"), NotesSchemaV1.Tag(label: "today")]
            second.tags = [NotesSchemaV1.Tag(label: "work")]
            try context.save()
        }
        let relfilenode = try await Inspect.strings("SELECT relfilenode::text FROM pg_class WHERE oid = '\(schema).note'::regclass")
        let dryRun = try await offCooperativePool {
            try ModelContainer.migrationDryRun(for: Schema(versionedSchema: NotesSchemaV2.self), migrationPlan: NotesMigrationPlan.self,
                                               configurations: [ModelConfiguration(url: url)])
        }
        #expect(dryRun.storeVersion == Schema.Version(1, 0, 0))
        #expect(dryRun.stages.count == 1)
        let sql = dryRun.stages.first?.statements.joined(separator: "\n") ?? ""
        #expect(sql.contains("RENAME COLUMN \"title\" TO \"heading\""))
        #expect(sql.contains("DROP COLUMN IF EXISTS \"legacy_flag\""))
        // The dry run changed nothing.
        #expect(try await Inspect.columns(schema, "note").contains("title"))

        let container = try await Self.open(NotesSchemaV2.self, NotesMigrationPlan.self, at: url)
        try await offCooperativePool {
            let context = ModelContext(container)
            let notes = try context.fetch(FetchDescriptor<NotesSchemaV2.Note>(sortBy: [SortDescriptor(\.heading)]))
            #expect(notes.map(\.heading) == ["groceries", "ideas"])
            #expect(notes.map(\.text) == ["milk", "migrations"])
            #expect(notes.map(\.priority) == [3, 3])
            #expect(notes.map(\.rating) == [4, 0])
            #expect(notes.map(\.createdAt) == [Date(timeIntervalSince1970: 1_700_000_000), Date(timeIntervalSince1970: 1_700_000_000)])
            #expect(notes.map { $0.tags.map(\.label).sorted() } == [["home", "today"], ["work"]])
            // Many-to-many now: a tag on two notes.
            let work = try #require(notes[1].tags.first)
            notes[0].tags.append(work)
            context.insert(NotesSchemaV2.Checklist(heading: "packing", text: "trip", items: ["passport"]))
            try context.save()
        }
        try await offCooperativePool {
            let context = ModelContext(container)
            let tags = try context.fetch(FetchDescriptor<NotesSchemaV2.Tag>(predicate: #Predicate { $0.label == "work" }))
            #expect(tags.first?.notes.count == 2)
            #expect(try context.fetchCount(FetchDescriptor<NotesSchemaV2.Checklist>()) == 1)
        }
        await container.close()
        let columns = try await Inspect.columns(schema, "note")
        #expect(columns.contains("heading") && columns.contains("text") && columns.contains("priority") && columns.contains("items"))
        #expect(!columns.contains("title") && !columns.contains("legacy_flag"))
        #expect(!(try await Inspect.columns(schema, "tag")).contains("note_id"))
        // Adding the defaulted columns did not rewrite the table.
        #expect(try await Inspect.strings("SELECT relfilenode::text FROM pg_class WHERE oid = '\(schema).note'::regclass") == relfilenode)
        try await Inspect.drop(schema)
    }

    @Test("through the service an admin migrates lightweight stages; others get schema_version_mismatch")
    func service() async throws {
        let service = try await TestService.migrations()
        try await service.register(Schema([NotesSchemaV1.Note.self, NotesSchemaV1.Tag.self]))
        try await service.register(Schema([V1.Trip.self, V1.BucketListItem.self, V1.LivingAccommodation.self]))
        let userURL = try await service.newUserURL()
        // A plain user's app on V2 may not migrate the store.
        let refused = await #expect(throws: PGModelError.self) {
            _ = try await Self.open(NotesSchemaV2.self, NotesMigrationPlan.self, at: userURL)
        }
        #expect(refused?.code == .schemaVersionMismatch)
        // A custom stage never runs through the service, admin or not.
        let adminURL = try await service.newUserURL(admin: true)
        let custom = await #expect(throws: PGModelError.self) {
            _ = try await Self.open(V2.self, SampleTripsPlanThroughV2.self, at: adminURL)
        }
        #expect(custom?.code == .schemaVersionMismatch)
        #expect(custom?.message.contains("direct store") == true)
        // A client of the old app, connected before the migration.
        let connectedBefore = try await offCooperativePool {
            try ModelContainer(for: NotesSchemaV1.Note.self, NotesSchemaV1.Tag.self, configurations: ModelConfiguration(url: userURL))
        }
        #expect(try await offCooperativePool { try ModelContext(connectedBefore).fetchCount(FetchDescriptor<NotesSchemaV1.Note>()) } == 0)
        // The admin's app migrates; then the user's V2 app opens, and a V1 app is refused.
        let admin = try await Self.open(NotesSchemaV2.self, NotesMigrationPlan.self, at: adminURL)
        await admin.close()
        let user = try await Self.open(NotesSchemaV2.self, NotesMigrationPlan.self, at: userURL)
        try await offCooperativePool {
            let context = ModelContext(user)
            context.insert(NotesSchemaV2.Note(heading: "after", text: "migration"))
            try context.save()
            #expect(try context.fetchCount(FetchDescriptor<NotesSchemaV2.Note>()) >= 1)
        }
        await user.close()
        // The old client's next request is refused rather than run against tables its models do not describe.
        let stale = await #expect(throws: PGModelError.self) {
            _ = try await offCooperativePool { try ModelContext(connectedBefore).fetch(FetchDescriptor<NotesSchemaV1.Note>()).count }
        }
        #expect(stale?.code == .schemaVersionMismatch)
        await connectedBefore.close()
        let old = await #expect(throws: PGModelError.self) {
            _ = try await offCooperativePool {
                try ModelContainer(for: NotesSchemaV1.Note.self, NotesSchemaV1.Tag.self, configurations: ModelConfiguration(url: userURL))
            }
        }
        #expect(old?.code == .schemaVersionMismatch)
    }
}

/// Reads the catalog and tables directly, as an admin in psql would.
enum Inspect {
    static func withConnection<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        let connection = try await EngineTestStore.connect(id: 77, logger: Logger(label: "inspect"))
        do {
            let result = try await body(connection)
            try await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }

    static func strings(_ sql: String) async throws -> [String] {
        try await withConnection { connection in
            var result: [String] = []
            for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "inspect")) {
                result.append(try row.decode(String?.self) ?? "NULL")
            }
            return result
        }
    }

    static func count(_ sql: String) async throws -> Int {
        Int(try await strings("SELECT (\(sql))::text").first ?? "") ?? -1
    }

    static func columns(_ schema: String, _ table: String) async throws -> [String] {
        try await strings("SELECT column_name::text FROM information_schema.columns WHERE table_schema = '\(schema)' AND table_name = '\(table)' ORDER BY ordinal_position")
    }

    static func drop(_ schema: String) async throws {
        try await withConnection { connection in
            _ = try await connection.query(PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \(schema) CASCADE"), logger: Logger(label: "inspect"))
            _ = try await connection.query(PostgresQuery(unsafeSQL: "DELETE FROM pgmodel.entities WHERE schema_name = '\(schema)'"), logger: Logger(label: "inspect"))
        }
    }
}
