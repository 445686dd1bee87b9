@_spi(PGModelInternals) import PGModelCore

/// One step of a ``SchemaMigrationPlan``, as in SwiftData.
///
/// - `lightweight`: PGModel computes the change from the two versions' models (added, removed and
///   renamed attributes, optional ↔ non-optional with a default value, entities and subclasses,
///   relationship storage, uniqueness constraints, indexes, delete rules) and runs it as DDL.
/// - `custom`: the same DDL, with `willMigrate` run before it on a `ModelContext` of the old version and
///   `didMigrate` after it on one of the new version. Their saves belong to the migration's transaction.
///
/// ```swift
/// static let migrateV3toV4 = MigrationStage.lightweight(fromVersion: SampleTripsSchemaV3.self,
///                                                       toVersion: SampleTripsSchemaV4.self)
/// ```
public enum MigrationStage: Sendable, CustomDebugStringConvertible {
    /// A change PGModel derives from the two versions.
    case lightweight(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type)
    /// A change with app code before (`willMigrate`, old models) and after (`didMigrate`, new models).
    case custom(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type,
                willMigrate: (@Sendable (ModelContext) throws -> Void)?, didMigrate: (@Sendable (ModelContext) throws -> Void)?)

    /// The version the stage starts from.
    var fromVersion: any VersionedSchema.Type {
        switch self {
        case .lightweight(let from, _), .custom(let from, _, _, _): return from
        }
    }

    /// The version the stage ends at.
    var toVersion: any VersionedSchema.Type {
        switch self {
        case .lightweight(_, let to), .custom(_, let to, _, _): return to
        }
    }

    var isCustom: Bool {
        if case .custom = self { return true }
        return false
    }

    public var debugDescription: String {
        "MigrationStage.\(isCustom ? "custom" : "lightweight")(\(fromVersion.versionIdentifier) → \(toVersion.versionIdentifier))"
    }
}
