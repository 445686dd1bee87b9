import Foundation
import Logging
@_spi(PGModelInternals) import PGModel
import PostgresNIO

// The seed's SampleTrips plan V1 → V4 over a store of `rows` trips (1% duplicate names, one bucket-list
// item per ten trips): the time of each stage as the migration logs it, and of the whole plan.
//
//   DATABASE_URL=postgres://… .build/release/PGModelBenchmarks --migration [--quick]

enum BenchTripsV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Trip.self, BucketListItem.self] }
    @Model final class Trip {
        var name: String
        var destination: String
        var start_date: Date
        var end_date: Date
        @Relationship(deleteRule: .cascade, inverse: \BucketListItem.trip) var bucketList: [BucketListItem] = []
        init(name: String, destination: String, start_date: Date, end_date: Date) {
            self.name = name; self.destination = destination; self.start_date = start_date; self.end_date = end_date
        }
    }
    @Model final class BucketListItem {
        var title: String
        var trip: Trip?
        init(title: String) { self.title = title }
    }
}

enum BenchTripsV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [Trip.self, BucketListItem.self] }
    @Model final class Trip {
        @Attribute(.unique) var name: String
        var destination: String
        @Attribute(originalName: "start_date") var startDate: Date
        @Attribute(originalName: "end_date") var endDate: Date
        @Relationship(deleteRule: .cascade, inverse: \BucketListItem.trip) var bucketList: [BucketListItem]? = []
        init(name: String, destination: String, startDate: Date, endDate: Date) {
            self.name = name; self.destination = destination; self.startDate = startDate; self.endDate = endDate
        }
    }
    @Model final class BucketListItem {
        var title: String
        var trip: Trip?
        init(title: String) { self.title = title }
    }
}

enum BenchTripsV3: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(3, 0, 0) }
    static var models: [any PersistentModel.Type] { [Trip.self, BucketListItem.self] }
    @Model final class Trip {
        #Unique<Trip>([\.name, \.startDate, \.endDate])
        #Index<Trip>([\.name], [\.startDate], [\.endDate], [\.name, \.startDate, \.endDate])
        @Attribute(.preserveValueOnDeletion) var name: String
        @Attribute(hashModifier: "v3") var destination: String
        @Attribute(.preserveValueOnDeletion, originalName: "start_date") var startDate: Date
        @Attribute(.preserveValueOnDeletion, originalName: "end_date") var endDate: Date
        @Relationship(deleteRule: .cascade, inverse: \BucketListItem.trip) var bucketList: [BucketListItem]? = []
        init(name: String, destination: String, startDate: Date, endDate: Date) {
            self.name = name; self.destination = destination; self.startDate = startDate; self.endDate = endDate
        }
    }
    @Model final class BucketListItem {
        var title: String
        var trip: Trip?
        init(title: String) { self.title = title }
    }
}

enum BenchTripsV4: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(4, 0, 0) }
    static var models: [any PersistentModel.Type] { [Trip.self, BusinessTrip.self, PersonalTrip.self, BucketListItem.self] }
    @Model class Trip {
        #Unique<Trip>([\.name, \.startDate, \.endDate])
        #Index<Trip>([\.name], [\.startDate], [\.endDate], [\.name, \.startDate, \.endDate])
        @Attribute(.preserveValueOnDeletion) var name: String
        @Attribute(hashModifier: "v3") var destination: String
        @Attribute(.preserveValueOnDeletion, originalName: "start_date") var startDate: Date
        @Attribute(.preserveValueOnDeletion, originalName: "end_date") var endDate: Date
        @Relationship(deleteRule: .cascade, inverse: \BucketListItem.trip) var bucketList: [BucketListItem]? = []
        init(name: String, destination: String, startDate: Date, endDate: Date) {
            self.name = name; self.destination = destination; self.startDate = startDate; self.endDate = endDate
        }
    }
    @Model class BusinessTrip: Trip {
        var perdiem: Double = 0.0
        init(name: String, destination: String, startDate: Date, endDate: Date, perdiem: Double) {
            self.perdiem = perdiem
            super.init(name: name, destination: destination, startDate: startDate, endDate: endDate)
        }
    }
    @Model class PersonalTrip: Trip {
        enum Reason: String, CaseIterable, Codable { case family, reunion, wellness }
        var reason: Reason
        init(name: String, destination: String, startDate: Date, endDate: Date, reason: Reason) {
            self.reason = reason
            super.init(name: name, destination: destination, startDate: startDate, endDate: endDate)
        }
    }
    @Model final class BucketListItem {
        var title: String
        var trip: Trip?
        init(title: String) { self.title = title }
    }
}

enum BenchTripsPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [BenchTripsV1.self, BenchTripsV2.self, BenchTripsV3.self, BenchTripsV4.self] }
    static var stages: [MigrationStage] { [v1v2, v2v3, v3v4] }

    static let v1v2 = MigrationStage.custom(fromVersion: BenchTripsV1.self, toVersion: BenchTripsV2.self, willMigrate: { context in
        var descriptor = FetchDescriptor<BenchTripsV1.Trip>()
        descriptor.propertiesToFetch = [\.name]
        var seen = Set<String>()
        for trip in try context.fetch(descriptor) where !seen.insert(trip.name).inserted { context.delete(trip) }
        try context.save()
    }, didMigrate: nil)

    static let v2v3 = MigrationStage.custom(fromVersion: BenchTripsV2.self, toVersion: BenchTripsV3.self, willMigrate: { context in
        var seen = Set<String>()
        for trip in try context.fetch(FetchDescriptor<BenchTripsV2.Trip>()) where !seen.insert("\(trip.name)|\(trip.startDate)|\(trip.endDate)").inserted {
            context.delete(trip)
        }
        try context.save()
    }, didMigrate: nil)

    static let v3v4 = MigrationStage.lightweight(fromVersion: BenchTripsV3.self, toVersion: BenchTripsV4.self)
}

/// Fills a V1 store, then opens it with the V4 plan; the stage times come from the migration's record.
func runMigrationBenchmark(url: URL, rows: Int) throws {

    let fill = ContinuousClock.now
    do {
        let container = try ModelContainer(for: BenchTripsV1.Trip.self, BenchTripsV1.BucketListItem.self,
                                           configurations: ModelConfiguration(url: url))
        let base = Date(timeIntervalSince1970: 1_750_000_000)
        let chunk = 10_000
        for start in stride(from: 0, to: rows, by: chunk) {
            let context = ModelContext(container)
            for i in start..<min(rows, start + chunk) {
                // Every hundredth trip repeats an earlier name: the duplicates V2's willMigrate removes.
                let name = i % 100 == 99 ? "trip \(i - 50)" : "trip \(i)"
                let trip = BenchTripsV1.Trip(name: name, destination: "city \(i % 500)", start_date: base.addingTimeInterval(Double(i) * 60),
                                             end_date: base.addingTimeInterval(Double(i) * 60 + 3_600))
                context.insert(trip)
                if i % 10 == 0 { trip.bucketList = [BenchTripsV1.BucketListItem(title: "item \(i)")] }
            }
            try context.save()
        }
        await_close(container)
    }
    let filled = ContinuousClock.now - fill
    let started = ContinuousClock.now
    let container = try ModelContainer(for: Schema(versionedSchema: BenchTripsV4.self), migrationPlan: BenchTripsPlan.self,
                                       configurations: ModelConfiguration(url: url))
    let total = ContinuousClock.now - started
    let remaining = try ModelContext(container).fetchCount(FetchDescriptor<BenchTripsV4.Trip>())
    print("## Migration: the seed's plan V1 → V4 over \(rows) trips\n")
    print("filled the V1 store in \(filled); the whole plan took \(total); \(remaining) trips remain\n")
    print("| stage | ms | rows after |")
    print("|---|---:|---|")
    // The per-stage durations are what the migration recorded in pgmodel.schema_versions (and logged).
    let done = DispatchSemaphore(value: 0)
    final class Box: @unchecked Sendable { var lines: [String] = [] }
    let box = Box()
    Task.detached {
        box.lines = (try? await migrationStageLines(url: url)) ?? ["(could not read pgmodel.schema_versions)"]
        done.signal()
    }
    done.wait()
    for line in box.lines { print(line) }
    await_close(container)
}

private func await_close(_ container: ModelContainer) {
    let done = DispatchSemaphore(value: 0)
    Task.detached { await container.close(); done.signal() }
    done.wait()
}

/// The recorded stages of the store's newest migrated version, one Markdown row each.
private func migrationStageLines(url: URL) async throws -> [String] {
    guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false), let host = components.host else { return [] }
    let schema = components.queryItems?.first { $0.name == "schema" }?.value ?? "public"
    let configuration = PostgresConnection.Configuration(
        host: host, port: components.port ?? 5432, username: components.user ?? "postgres",
        password: components.password, database: String(components.path.dropFirst()), tls: .disable).pgmodelSession()
    let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: Logger(label: "bench"))
    defer { Task { try? await connection.close() } }
    var lines: [String] = []
    let query: PostgresQuery = """
        SELECT s->>'kind', s->>'from', s->>'to', (s->>'milliseconds')::int, (s->'rows')::text
        FROM pgmodel.schema_versions v, jsonb_array_elements(v.stages) AS s
        WHERE v.schema_name = \(schema) AND v.fingerprint IS NOT NULL ORDER BY v.id
        """
    for try await (kind, from, to, milliseconds, rows) in try await connection.query(query, logger: Logger(label: "bench")).decode((String, String, String, Int, String).self) {
        lines.append("| \(kind) \(from) → \(to) | \(milliseconds) | \(rows) |")
    }
    return lines
}
