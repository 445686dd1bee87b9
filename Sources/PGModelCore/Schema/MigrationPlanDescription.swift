import Foundation

/// A `SchemaMigrationPlan` as the stores see it: every version's schema description and the stages
/// between them. Codable, so the service can migrate a remote client's store (lightweight stages only).
///
/// ```swift
/// let plan = MigrationPlanDescription(schemas: [v1, v2], stages: [.init(from: "1.0.0", to: "2.0.0", isCustom: true)])
/// let start = try plan.storeVersion(registered: registered, recorded: "1.0.0")   // "1.0.0"
/// let stages = try plan.path(from: "1.0.0", to: "2.0.0")
/// ```
@_spi(PGModelInternals) public struct MigrationPlanDescription: Codable, Hashable, Sendable {
    /// One step between two versions.
    public struct Stage: Codable, Hashable, Sendable, CustomStringConvertible {
        /// The version the stage starts from.
        public var from: String
        /// The version it ends at.
        public var to: String
        /// Whether app code runs in it (`MigrationStage.custom`): only the direct store can run it.
        public var isCustom: Bool

        public init(from: String, to: String, isCustom: Bool) {
            self.from = from
            self.to = to
            self.isCustom = isCustom
        }

        public var description: String { "\(isCustom ? "custom" : "lightweight") stage \(from) → \(to)" }
    }

    /// Every version's schema, oldest first (each description's `version` names it).
    public var schemas: [SchemaDescription]
    /// The declared stages.
    public var stages: [Stage]

    public init(schemas: [SchemaDescription], stages: [Stage]) {
        self.schemas = schemas.sorted { SchemaVersionOrder.less($0.version, $1.version) }
        self.stages = stages
    }

    /// Every entity name any version has: the part of a store the plan owns.
    public var entityNames: Set<String> { Set(schemas.flatMap { $0.entities.map(\.name) }) }

    /// The schema of `version`.
    public func schema(_ version: String) -> SchemaDescription? {
        schemas.first { $0.version == version }
    }

    /// Checks that versions are unique and every stage connects two versions of the plan, forwards.
    public func validate() throws {
        var seen = Set<String>()
        for schema in schemas where !seen.insert(schema.version).inserted {
            throw PGModelError(.invalidSchema, "the migration plan lists schema version \(schema.version) twice")
        }
        for stage in stages {
            guard schema(stage.from) != nil, schema(stage.to) != nil else {
                throw PGModelError(.invalidSchema, "the migration plan's \(stage) names a version missing from its schemas")
            }
            guard SchemaVersionOrder.less(stage.from, stage.to) else {
                throw PGModelError(.invalidSchema, "the migration plan's \(stage) does not go to a newer version")
            }
        }
    }

    /// The version whose shape the store has: `nil` for a store holding none of the plan's entities (a new
    /// store). The recorded version wins when its shape matches; a store that never recorded one (made
    /// before the app adopted `VersionedSchema`) is the newest version with its shape. A store whose shape
    /// matches no version throws `unknown_schema_version`, listing how it differs from each.
    public func storeVersion(registered: SchemaDescription, recorded: String?) throws -> String? {
        let names = entityNames
        let held = registered.entities.filter { names.contains($0.name) }
        guard !held.isEmpty else { return nil }
        let store = SchemaDescription(entities: held)
        if let recorded, let schema = schema(recorded), Self.difference(store: store, version: schema) == nil { return recorded }
        if let match = schemas.reversed().first(where: { Self.difference(store: store, version: $0) == nil }) { return match.version }
        let differences = schemas.reversed().compactMap { schema in
            Self.difference(store: store, version: schema).map { "\(schema.version): \($0)" }
        }
        throw PGModelError(.unknownSchemaVersion,
            "the store's \(held.map(\.name).sorted().joined(separator: ", ")) match no version of the migration plan (\(differences.joined(separator: "; ")))",
            model: held.first?.name)
    }

    /// The first way the store's entities differ from `version`'s, or `nil` when they have its shape.
    public static func difference(store: SchemaDescription, version: SchemaDescription) -> String? {
        if let difference = store.firstDifference(registering: version) { return difference.description }
        for entity in store.entities where version.entity(named: entity.name) == nil {
            return "\(entity.name) is in the store but not in this version"
        }
        return nil
    }

    /// Where a store stands and what moves it to `target`: its version (`nil` for a store holding none
    /// of the plan's entities) and the stages, from its registered entities and recorded version. An app
    /// older than the store throws `schema_version_mismatch`.
    public func route(registered: SchemaDescription, recorded: String?, target: String) throws -> (start: String?, stages: [Stage]) {
        if let recorded, SchemaVersionOrder.less(target, recorded) {
            throw PGModelError(.schemaVersionMismatch,
                "the store is at schema version \(recorded), newer than this app's \(target); update the app (PGModel never migrates a store backwards)")
        }
        guard let start = try storeVersion(registered: registered, recorded: recorded) else { return (nil, []) }
        return (start, try path(from: start, to: target))
    }

    /// The stages from `start` to `target`, in order. Consecutive versions with no declared stage
    /// migrate lightweight, as SwiftData does.
    public func path(from start: String, to target: String) throws -> [Stage] {
        guard let startIndex = schemas.firstIndex(where: { $0.version == start }),
              let targetIndex = schemas.firstIndex(where: { $0.version == target }) else {
            throw PGModelError(.invalidSchema, "the migration plan has no schema version \(schema(start) == nil ? start : target)")
        }
        guard startIndex <= targetIndex else {
            throw PGModelError(.schemaVersionMismatch,
                "the store is at schema version \(start), newer than this app's \(target); update the app (PGModel never migrates a store backwards)")
        }
        var result: [Stage] = []
        var index = startIndex
        while index < targetIndex {
            let from = schemas[index].version
            let declared = stages.filter { $0.from == from }.compactMap { stage -> (Stage, Int)? in
                guard let to = schemas.firstIndex(where: { $0.version == stage.to }), to > index, to <= targetIndex else { return nil }
                return (stage, to)
            }.min { $0.1 < $1.1 }
            if let (stage, to) = declared {
                result.append(stage)
                index = to
            } else {
                result.append(Stage(from: from, to: schemas[index + 1].version, isCustom: false))
                index += 1
            }
        }
        return result
    }
}

/// Orders version strings `major.minor.patch` numerically (`10.0.0` after `9.0.0`).
@_spi(PGModelInternals) public enum SchemaVersionOrder {
    /// Whether `a` is an older version than `b`.
    public static func less(_ a: String, _ b: String) -> Bool {
        let x = parts(a), y = parts(b)
        for (l, r) in zip(x, y) where l != r { return l < r }
        return x.count < y.count
    }

    private static func parts(_ version: String) -> [Int] {
        version.split(separator: ".").map { Int($0) ?? 0 }
    }
}

extension PGModelError {
    /// `migration_failed` for `stage`, naming the step that failed (`willMigrate`, the schema change,
    /// `didMigrate`) and keeping the underlying error's code, message, model, key path and SQL state.
    ///
    /// ```swift
    /// catch { throw PGModelError.migrationFailed(stage, step: "willMigrate", error) }
    /// ```
    @_spi(PGModelInternals) public static func migrationFailed(_ stage: MigrationPlanDescription.Stage, step: String?, _ error: any Error) -> PGModelError {
        let underlying = error as? PGModelError
        let place = step.map { " in \($0)" } ?? ""
        return PGModelError(.migrationFailed,
            "the migration's \(stage) failed\(place), and the store was left at its old version: \(underlying.map { "\($0.code): \($0.message)" } ?? "\(error)")",
            model: underlying?.model, keyPath: underlying?.keyPath, sqlState: underlying?.sqlState)
    }
}

@_spi(PGModelInternals) extension Duration {
    /// Whole milliseconds, for logs and recorded stage durations.
    public var wholeMilliseconds: Int {
        Int(components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000)
    }
}
