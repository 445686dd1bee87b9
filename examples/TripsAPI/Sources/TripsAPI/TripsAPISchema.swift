import Foundation
import PGModel

/// The API's first release: trips without a budget. Kept so a store of that release still migrates;
/// the app itself never reads or writes these models (its tests make such a store).
///
/// ```swift
/// let v1 = Schema(versionedSchema: TripsAPISchemaV1.self)
/// ```
public enum TripsAPISchemaV1: VersionedSchema {
    public static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    public static var models: [any PersistentModel.Type] { [TripsAPISchemaV1.Trip.self] }

    /// A trip as the first release stored it.
    ///
    /// ```swift
    /// context.insert(TripsAPISchemaV1.Trip(name: "Oslo", destination: "Oslo", startDate: .now, endDate: .now))
    /// ```
    @Model public final class Trip {
        /// The trip's name, unique.
        @Attribute(.unique) public var name: String
        /// Where the trip goes.
        public var destination: String
        /// The first day.
        public var startDate: Date
        /// The last day.
        public var endDate: Date

        /// A trip with these values.
        public init(name: String, destination: String, startDate: Date, endDate: Date) {
            self.name = name
            self.destination = destination
            self.startDate = startDate
            self.endDate = endDate
        }
    }
}

/// Today's schema: ``Trip`` with its budget.
///
/// ```swift
/// let container = try ModelContainer(for: Schema(versionedSchema: TripsAPISchemaV2.self),
///                                    migrationPlan: TripsAPIMigrationPlan.self, configurations: configuration)
/// ```
public enum TripsAPISchemaV2: VersionedSchema {
    public static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    public static var models: [any PersistentModel.Type] { [Trip.self] }
}

/// V1 → V2: a lightweight stage, since the new `budget` column has a default (0) for the trips already
/// stored. `TripsAPIExample migrate` runs it before a release; the server's container runs it too when
/// nobody did.
///
/// ```swift
/// TripsAPIExample migrate --dry-run     # the stage and its SQL
/// TripsAPIExample migrate --json        # one JSON object per progress event
/// ```
public enum TripsAPIMigrationPlan: SchemaMigrationPlan {
    public static var schemas: [any VersionedSchema.Type] { [TripsAPISchemaV1.self, TripsAPISchemaV2.self] }
    public static var stages: [MigrationStage] { [.lightweight(fromVersion: TripsAPISchemaV1.self, toVersion: TripsAPISchemaV2.self)] }
}
