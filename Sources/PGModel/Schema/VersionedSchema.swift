/// One version of an app's schema: its models and its version number, as in SwiftData. Models may be
/// nested in the enum (`SampleTripsSchemaV1.Trip`); a model's entity name is its class name, so
/// `SampleTripsSchemaV1.Trip` and `SampleTripsSchemaV2.Trip` are two versions of the entity `Trip`.
///
/// ```swift
/// enum SampleTripsSchemaV2: VersionedSchema {
///     static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
///     static var models: [any PersistentModel.Type] { [SampleTripsSchemaV2.Trip.self] }
///
///     @Model final class Trip {
///         @Attribute(.unique) var name: String
///         @Attribute(originalName: "start_date") var startDate: Date
///         init(name: String, startDate: Date) { self.name = name; self.startDate = startDate }
///     }
/// }
/// ```
public protocol VersionedSchema: Sendable {
    /// The models of this version.
    static var models: [any PersistentModel.Type] { get }
    /// The version number.
    static var versionIdentifier: Schema.Version { get }
}

extension Schema {
    /// The schema of one version of an app's models.
    ///
    /// ```swift
    /// let schema = Schema(versionedSchema: SampleTripsSchemaV4.self)
    /// let container = try ModelContainer(for: schema, migrationPlan: SampleTripsMigrationPlan.self)
    /// ```
    public convenience init(versionedSchema: any VersionedSchema.Type) {
        self.init(versionedSchema.models, version: versionedSchema.versionIdentifier)
    }
}
