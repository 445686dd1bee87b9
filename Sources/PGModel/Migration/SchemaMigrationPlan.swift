/// How an app's store moves from each schema version to the next, as in SwiftData: the versions in
/// order and the stages between them. Give it to `ModelContainer(for:migrationPlan:configurations:)`.
///
/// PGModel runs every stage from the store's version to the app's in one PostgreSQL transaction under
/// the store's schema lock: a stage that fails (a throwing `willMigrate`, a new uniqueness constraint
/// over duplicates, a failed DDL statement) throws `migration_failed` naming the stage, and the store
/// keeps its old version and all its data. Consecutive versions without a declared stage migrate
/// lightweight.
///
/// ```swift
/// enum SampleTripsMigrationPlan: SchemaMigrationPlan {
///     static var schemas: [any VersionedSchema.Type] { [SampleTripsSchemaV1.self, SampleTripsSchemaV2.self] }
///     static var stages: [MigrationStage] { [migrateV1toV2] }
///
///     static let migrateV1toV2 = MigrationStage.custom(
///         fromVersion: SampleTripsSchemaV1.self, toVersion: SampleTripsSchemaV2.self,
///         willMigrate: { context in
///             let trips = try context.fetch(FetchDescriptor<SampleTripsSchemaV1.Trip>())
///             // De-duplicate trips here…
///             try context.save()
///         }, didMigrate: nil)
/// }
/// ```
public protocol SchemaMigrationPlan {
    /// Every version, oldest first.
    static var schemas: [any VersionedSchema.Type] { get }
    /// The stages between versions.
    static var stages: [MigrationStage] { get }
}
