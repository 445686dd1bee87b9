import Foundation
@_spi(PGModelInternals) import PGModel

// The seed's SampleTrips versions (WWDC25 "SwiftData: Dive into inheritance and schema migration"),
// each version's models nested in its schema enum as the seed's V2 and V3 are. V1 is the app before
// it adopted VersionedSchema: `start_date`/`end_date` are its property names.

enum SampleTripsSchemaV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] {
        [SampleTripsSchemaV1.Trip.self, SampleTripsSchemaV1.BucketListItem.self, SampleTripsSchemaV1.LivingAccommodation.self]
    }

    @Model
    final class Trip {
        var name: String
        var destination: String
        var start_date: Date
        var end_date: Date
        @Relationship(deleteRule: .cascade, inverse: \BucketListItem.trip)
        var bucketList: [BucketListItem] = []
        @Relationship(deleteRule: .cascade, inverse: \LivingAccommodation.trip)
        var livingAccommodation: LivingAccommodation?

        init(name: String, destination: String, start_date: Date, end_date: Date) {
            self.name = name
            self.destination = destination
            self.start_date = start_date
            self.end_date = end_date
        }
    }

    @Model
    final class BucketListItem {
        var title: String
        var trip: Trip?
        init(title: String) { self.title = title }
    }

    @Model
    final class LivingAccommodation {
        var address: String
        var trip: Trip?
        init(address: String) { self.address = address }
    }
}

enum SampleTripsSchemaV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] {
        [SampleTripsSchemaV2.Trip.self, SampleTripsSchemaV2.BucketListItem.self, SampleTripsSchemaV2.LivingAccommodation.self]
    }

    @Model
    final class Trip {
        @Attribute(.unique) var name: String
        var destination: String
        @Attribute(originalName: "start_date") var startDate: Date
        @Attribute(originalName: "end_date") var endDate: Date
        @Relationship(deleteRule: .cascade, inverse: \BucketListItem.trip)
        var bucketList: [BucketListItem]? = []
        @Relationship(deleteRule: .cascade, inverse: \LivingAccommodation.trip)
        var livingAccommodation: LivingAccommodation?

        init(name: String, destination: String, startDate: Date, endDate: Date) {
            self.name = name
            self.destination = destination
            self.startDate = startDate
            self.endDate = endDate
        }
    }

    @Model
    final class BucketListItem {
        var title: String
        var trip: Trip?
        init(title: String) { self.title = title }
    }

    @Model
    final class LivingAccommodation {
        var address: String
        var trip: Trip?
        init(address: String) { self.address = address }
    }
}

enum SampleTripsSchemaV3: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(3, 0, 0) }
    static var models: [any PersistentModel.Type] {
        [SampleTripsSchemaV3.Trip.self, SampleTripsSchemaV3.BucketListItem.self, SampleTripsSchemaV3.LivingAccommodation.self]
    }

    @Model
    final class Trip {
        #Unique<Trip>([\.name, \.startDate, \.endDate])
        #Index<Trip>([\.name], [\.startDate], [\.endDate], [\.name, \.startDate, \.endDate])

        @Attribute(.preserveValueOnDeletion)
        var name: String

        @Attribute(hashModifier: "v3")
        var destination: String

        @Attribute(.preserveValueOnDeletion, originalName: "start_date")
        var startDate: Date

        @Attribute(.preserveValueOnDeletion, originalName: "end_date")
        var endDate: Date

        @Relationship(deleteRule: .cascade, inverse: \BucketListItem.trip)
        var bucketList: [BucketListItem]? = []
        @Relationship(deleteRule: .cascade, inverse: \LivingAccommodation.trip)
        var livingAccommodation: LivingAccommodation?

        init(name: String, destination: String, startDate: Date, endDate: Date) {
            self.name = name
            self.destination = destination
            self.startDate = startDate
            self.endDate = endDate
        }
    }

    @Model
    final class BucketListItem {
        var title: String
        var trip: Trip?
        init(title: String) { self.title = title }
    }

    @Model
    final class LivingAccommodation {
        var address: String
        var trip: Trip?
        init(address: String) { self.address = address }
    }
}

enum SampleTripsSchemaV4: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(4, 0, 0) }
    static var models: [any PersistentModel.Type] {
        [Trip.self, BusinessTrip.self, PersonalTrip.self, BucketListItem.self, LivingAccommodation.self]
    }

    @Model
    class Trip {
        #Unique<Trip>([\.name, \.startDate, \.endDate])
        #Index<Trip>([\.name], [\.startDate], [\.endDate], [\.name, \.startDate, \.endDate])

        @Attribute(.preserveValueOnDeletion)
        var name: String

        @Attribute(hashModifier: "v3")
        var destination: String

        @Attribute(.preserveValueOnDeletion, originalName: "start_date")
        var startDate: Date

        @Attribute(.preserveValueOnDeletion, originalName: "end_date")
        var endDate: Date

        @Relationship(deleteRule: .cascade, inverse: \BucketListItem.trip)
        var bucketList: [BucketListItem]? = []
        @Relationship(deleteRule: .cascade, inverse: \LivingAccommodation.trip)
        var livingAccommodation: LivingAccommodation?

        init(name: String, destination: String, startDate: Date, endDate: Date) {
            self.name = name
            self.destination = destination
            self.startDate = startDate
            self.endDate = endDate
        }
    }

    @Model
    class BusinessTrip: Trip {
        var perdiem: Double = 0.0

        init(name: String, destination: String, startDate: Date, endDate: Date, perdiem: Double) {
            self.perdiem = perdiem
            super.init(name: name, destination: destination, startDate: startDate, endDate: endDate)
        }
    }

    @Model
    class PersonalTrip: Trip {
        enum Reason: String, CaseIterable, Codable {
            case family
            case reunion
            case wellness
        }

        var reason: Reason

        init(name: String, destination: String, startDate: Date, endDate: Date, reason: Reason) {
            self.reason = reason
            super.init(name: name, destination: destination, startDate: startDate, endDate: endDate)
        }
    }

    @Model
    final class BucketListItem {
        var title: String
        var trip: Trip?
        init(title: String) { self.title = title }
    }

    @Model
    final class LivingAccommodation {
        var address: String
        var trip: Trip?
        init(address: String) { self.address = address }
    }
}

/// Counts how often the plan's custom stages ran (the two-process test checks that one process migrated).
final class MigrationCalls: @unchecked Sendable {
    static let shared = MigrationCalls()
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    func record(_ stage: String) { lock.lock(); counts[stage, default: 0] += 1; lock.unlock() }
    func count(_ stage: String) -> Int { lock.lock(); defer { lock.unlock() }; return counts[stage] ?? 0 }
}

enum SampleTripsMigrationPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] {
        [SampleTripsSchemaV1.self, SampleTripsSchemaV2.self, SampleTripsSchemaV3.self, SampleTripsSchemaV4.self]
    }

    static var stages: [MigrationStage] {
        [migrateV1toV2, migrateV2toV3, migrateV3toV4]
    }

    // The seed's stages, with the de-duplication it leaves as a comment written out: keep the first
    // trip of each name (V2 makes `name` unique), and of each (name, start, end) for V3.
    static let migrateV1toV2 = MigrationStage.custom(
        fromVersion: SampleTripsSchemaV1.self,
        toVersion: SampleTripsSchemaV2.self,
        willMigrate: { context in
            MigrationCalls.shared.record("v1v2")
            var fetchDesc = FetchDescriptor<SampleTripsSchemaV1.Trip>(sortBy: [SortDescriptor(\.start_date)])
            fetchDesc.propertiesToFetch = [\.name]
            fetchDesc.relationshipKeyPathsForPrefetching = [\.livingAccommodation]
            let trips = try context.fetch(fetchDesc)
            var seen = Set<String>()
            for trip in trips where !seen.insert(trip.name).inserted {
                context.delete(trip)
            }
            try context.save()
        },
        didMigrate: nil
    )

    static let migrateV2toV3 = MigrationStage.custom(
        fromVersion: SampleTripsSchemaV2.self,
        toVersion: SampleTripsSchemaV3.self,
        willMigrate: { context in
            MigrationCalls.shared.record("v2v3")
            let trips = try context.fetch(FetchDescriptor<SampleTripsSchemaV2.Trip>())
            var seen = Set<String>()
            for trip in trips where !seen.insert("\(trip.name)|\(trip.startDate)|\(trip.endDate)").inserted {
                context.delete(trip)
            }
            try context.save()
        },
        didMigrate: nil
    )

    static let migrateV3toV4 = MigrationStage.lightweight(
        fromVersion: SampleTripsSchemaV3.self,
        toVersion: SampleTripsSchemaV4.self
    )
}

/// The same plan cut at a version: what an app of that release shipped.
enum SampleTripsPlanThroughV2: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [SampleTripsSchemaV1.self, SampleTripsSchemaV2.self] }
    static var stages: [MigrationStage] { [SampleTripsMigrationPlan.migrateV1toV2] }
}

enum SampleTripsPlanThroughV3: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [SampleTripsSchemaV1.self, SampleTripsSchemaV2.self, SampleTripsSchemaV3.self] }
    static var stages: [MigrationStage] { [SampleTripsMigrationPlan.migrateV1toV2, SampleTripsMigrationPlan.migrateV2toV3] }
}

/// V1 → V2 without de-duplication: the new uniqueness constraint meets duplicates.
enum SampleTripsNaivePlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [SampleTripsSchemaV1.self, SampleTripsSchemaV2.self] }
    static var stages: [MigrationStage] {
        [.lightweight(fromVersion: SampleTripsSchemaV1.self, toVersion: SampleTripsSchemaV2.self)]
    }
}

/// V1 → V2 whose willMigrate saves, then throws.
enum SampleTripsFailingPlan: SchemaMigrationPlan {
    struct Refused: Error {}
    static var schemas: [any VersionedSchema.Type] { [SampleTripsSchemaV1.self, SampleTripsSchemaV2.self] }
    static var stages: [MigrationStage] {
        [.custom(fromVersion: SampleTripsSchemaV1.self, toVersion: SampleTripsSchemaV2.self,
                 willMigrate: { context in
                     context.insert(SampleTripsSchemaV1.Trip(name: "written-then-refused", destination: "x", start_date: .now, end_date: .now))
                     for trip in try context.fetch(FetchDescriptor<SampleTripsSchemaV1.Trip>()) { trip.destination = "changed" }
                     try context.save()
                     throw Refused()
                 }, didMigrate: nil)]
    }
}

// A lightweight-only plan over every kind of change: attributes added (non-optional with a default),
// dropped, renamed to another column, made non-optional with a default, a subclass added, a to-many
// becoming many-to-many, a new index and uniqueness constraint, a relationship's delete rule.

enum NotesSchemaV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Note.self, Tag.self] }

    @Model
    class Note {
        var title: String
        var body: String
        var legacyFlag: Bool
        var rating: Int?
        @Relationship(deleteRule: .nullify, inverse: \Tag.note)
        var tags: [Tag] = []
        init(title: String, body: String, rating: Int?) {
            self.title = title
            self.body = body
            self.legacyFlag = true
            self.rating = rating
        }
    }

    @Model
    final class Tag {
        var label: String
        var note: Note?
        init(label: String) { self.label = label }
    }
}

enum NotesSchemaV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [Note.self, Checklist.self, Tag.self] }

    @Model
    class Note {
        #Index<Note>([\.heading])
        #Unique<Note>([\.heading, \.text])

        @Attribute(originalName: "title") var heading: String
        @Attribute(originalName: "body") var text: String
        var priority: Int = 3
        var rating: Int = 0
        var createdAt: Date = Date(timeIntervalSince1970: 1_700_000_000)
        @Relationship(deleteRule: .cascade, inverse: \Tag.notes)
        var tags: [Tag] = []
        init(heading: String, text: String) {
            self.heading = heading
            self.text = text
        }
    }

    @Model
    class Checklist: Note {
        var items: [String] = []
        init(heading: String, text: String, items: [String]) {
            self.items = items
            super.init(heading: heading, text: text)
        }
    }

    @Model
    final class Tag {
        var label: String
        var notes: [Note] = []
        init(label: String) { self.label = label }
    }
}

enum NotesMigrationPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [NotesSchemaV1.self, NotesSchemaV2.self] }
    static var stages: [MigrationStage] { [.lightweight(fromVersion: NotesSchemaV1.self, toVersion: NotesSchemaV2.self)] }
}

/// V1 → V2 that counts its runs under its own key: two processes starting it at once must run it once.
enum SampleTripsCountingPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [SampleTripsSchemaV1.self, SampleTripsSchemaV2.self] }
    static var stages: [MigrationStage] {
        [.custom(fromVersion: SampleTripsSchemaV1.self, toVersion: SampleTripsSchemaV2.self,
                 willMigrate: { context in
                     MigrationCalls.shared.record("concurrent")
                     var seen = Set<String>()
                     for trip in try context.fetch(FetchDescriptor<SampleTripsSchemaV1.Trip>()) where !seen.insert(trip.name).inserted {
                         context.delete(trip)
                     }
                 }, didMigrate: { context in
                     MigrationCalls.shared.record("concurrent-did")
                     // didMigrate sees the new version's models and columns.
                     for trip in try context.fetch(FetchDescriptor<SampleTripsSchemaV2.Trip>()) { trip.destination += " (v2)" }
                 })]
    }
}
