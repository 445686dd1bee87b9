import Foundation
import Logging
import NIOCore
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres

/// What a migration would do, computed without changing anything: the store's version and, for each
/// stage, the SQL it would run.
///
/// ```swift
/// let dryRun = try ModelContainer.migrationDryRun(for: Schema(versionedSchema: SampleTripsSchemaV4.self),
///                                                 migrationPlan: SampleTripsMigrationPlan.self, configurations: [configuration])
/// for stage in dryRun.stages { print(stage.from, "→", stage.to, stage.statements.count, "statements") }
/// ```
public struct MigrationDryRun: Sendable, CustomStringConvertible {
    /// One stage the migration would run.
    public struct Stage: Sendable {
        /// The version it starts from.
        public var from: Schema.Version
        /// The version it ends at.
        public var to: Schema.Version
        /// Whether app code (`willMigrate`/`didMigrate`) would run around the SQL.
        public var isCustom: Bool
        /// The statements of its schema change, in order (values of defaults travel as parameters and
        /// are not shown).
        public var statements: [String]
    }

    /// The version the store has; `nil` for a store that holds none of the plan's models yet.
    public var storeVersion: Schema.Version?
    /// The version the app wants.
    public var targetVersion: Schema.Version
    /// The stages, in order; empty when the store is already at the app's version.
    public var stages: [Stage]

    public var description: String {
        var lines = ["store at \(storeVersion.map(\.description) ?? "no version (new store)"), app at \(targetVersion)"]
        for stage in stages {
            if storeVersion == nil {
                lines.append("create the store at \(stage.to):")
            } else {
                lines.append("\(stage.isCustom ? "custom" : "lightweight") stage \(stage.from) → \(stage.to):")
            }
            lines += stage.statements.map { "  " + $0 + ";" }
        }
        return lines.joined(separator: "\n")
    }
}

extension ModelContainer {
    /// What opening a container with `migrationPlan` would do to the store, without changing it: the
    /// stages from the store's version to `givenSchema`'s and their SQL. Only the direct store
    /// (`postgres://`) can answer; the service throws `invalid_configuration`.
    public static func migrationDryRun(for givenSchema: Schema, migrationPlan: any SchemaMigrationPlan.Type,
                                       configurations: [ModelConfiguration]) throws -> MigrationDryRun {
        let configuration = configurations.first ?? ModelConfiguration()
        let schema = configuration.schema ?? givenSchema
        let (store, bridge) = try ModelStores.open(url: configuration.url, isStoredInMemoryOnly: configuration.isStoredInMemoryOnly,
                                                   requestTimeout: try configuration.effectiveRequestTimeout())
        defer { try? bridge.run { await store.close() } }
        guard let postgres = store as? PostgresModelStore else {
            throw PGModelError(.invalidConfiguration, "a migration dry run needs the direct store (postgres://), not the service")
        }
        let plan = try PlanContext(migrationPlan, target: schema)
        let session = try bridge.run(timeout: Self.migrationTimeout) { try await postgres.gateway.openMigrationSession() }
        do {
            let (start, stages) = try plan.route(session: session, bridge: bridge)
            var result = MigrationDryRun(storeVersion: start.flatMap(Schema.Version.init(parsing:)), targetVersion: schema.version, stages: [])
            let empty = SchemaDescription(entities: [])
            if start == nil {
                let target = plan.description.schema(plan.target) ?? schema.schemaDescription
                let statements = try bridge.run(timeout: Self.migrationTimeout) { try await session.statements(from: empty, to: target) }
                result.stages.append(.init(from: schema.version, to: schema.version, isCustom: false, statements: statements))
            }
            // A new store is created at the target version in one step (as `migrate` does): the plan's
            // stages have nothing to move.
            for stage in start == nil ? [] : stages {
                guard let old = plan.description.schema(stage.from), let new = plan.description.schema(stage.to) else { continue }
                let statements = try bridge.run(timeout: Self.migrationTimeout) { try await session.statements(from: old, to: new) }
                result.stages.append(.init(from: Schema.Version(parsing: stage.from) ?? schema.version,
                                           to: Schema.Version(parsing: stage.to) ?? schema.version,
                                           isCustom: stage.isCustom, statements: statements))
            }
            try? bridge.run { await session.rollback() }
            return result
        } catch {
            try? bridge.run { await session.rollback() }
            throw error
        }
    }

    /// Moves the store to `givenSchema`'s version through `migrationPlan`'s stages, as opening a container
    /// with the plan does, without opening one: for a `migrate` command an operator runs before the new
    /// release starts (see ``MigrationCommandLine``). `progress` hears each stage start, each step, each
    /// stage end or failure, and the final report, on the calling thread, as they happen.
    ///
    /// Every stage runs in one transaction under the store's schema lock: a failure throws
    /// `migration_failed` naming the stage and the step (after `progress` heard `.stageFailed`), and the
    /// store keeps its old version and all its data. A store already at the app's version reports
    /// ``MigrationReport/Outcome/upToDate``.
    ///
    /// ```swift
    /// let report = try ModelContainer.migrate(for: Schema(versionedSchema: SampleTripsSchemaV4.self),
    ///                                         migrationPlan: SampleTripsMigrationPlan.self,
    ///                                         configurations: [ModelConfiguration(url: url)]) { event in
    ///     print(event)
    /// }
    /// print(report)   // migrated the store from 1.0.0 to 4.0.0: 3 stages in 412 ms
    /// ```
    @discardableResult
    public static func migrate(for givenSchema: Schema, migrationPlan: any SchemaMigrationPlan.Type, configurations: [ModelConfiguration],
                               progress: @Sendable (MigrationProgress) -> Void = { _ in }) throws -> MigrationReport {
        try migrate(for: givenSchema, migrationPlan: migrationPlan, configurations: configurations,
                    logger: Logger(label: "pgmodel.migration"), progress: progress)
    }

    /// ``migrate(for:migrationPlan:configurations:progress:)`` logging to `logger`: the command line
    /// silences it, since its own progress lines say the same on the same stream.
    static func migrate(for givenSchema: Schema, migrationPlan: any SchemaMigrationPlan.Type, configurations: [ModelConfiguration],
                        logger: Logger, progress: @Sendable (MigrationProgress) -> Void) throws -> MigrationReport {
        let configuration = configurations.first ?? ModelConfiguration()
        try configuration.validate()
        let schema = configuration.schema ?? givenSchema
        let (store, bridge) = try ModelStores.open(url: configuration.url, isStoredInMemoryOnly: configuration.isStoredInMemoryOnly,
                                                   requestTimeout: try configuration.effectiveRequestTimeout())
        defer { try? bridge.run { await store.close() } }
        return try migrate(store, bridge: bridge, to: schema, plan: migrationPlan, configurations: configurations, logger: logger, progress: progress)
    }

    /// A migration may run long: its steps are not held to the request deadline.
    static let migrationTimeout: TimeAmount = .hours(6)

    /// Moves the store to `target` through `plan`'s stages (see ``SchemaMigrationPlan``): the one
    /// migration both the initializer and ``migrate(for:migrationPlan:configurations:progress:)`` run.
    /// Called on the caller's thread, so `willMigrate` and `didMigrate` run there with contexts whose
    /// synchronous calls block it, as everywhere else.
    @discardableResult
    static func migrate(_ store: any ModelStore, bridge: BlockingBridge, to target: Schema, plan migrationPlan: any SchemaMigrationPlan.Type,
                        configurations: [ModelConfiguration], logger: Logger = Logger(label: "pgmodel.migration"),
                        progress: @Sendable (MigrationProgress) -> Void = { _ in }) throws -> MigrationReport {
        let started = ContinuousClock.now
        let plan = try PlanContext(migrationPlan, target: target)
        let targetVersion = target.version
        func finish(_ outcome: MigrationReport.Outcome, from start: String?, stages: [MigrationReport.Stage]) -> MigrationReport {
            let report = MigrationReport(outcome: outcome, storeVersion: start.flatMap(Schema.Version.init(parsing:)), targetVersion: targetVersion,
                                         stages: stages, milliseconds: (ContinuousClock.now - started).wholeMilliseconds)
            progress(.finished(report))
            return report
        }
        if let remote = store as? RemoteModelStore {
            let description = plan.description
            guard let schema = description.schema(plan.target) else { return finish(.upToDate, from: plan.target, stages: []) }
            try bridge.run(timeout: Self.migrationTimeout) { try await remote.migrate(to: schema, plan: description) }
            return finish(.service, from: nil, stages: [])
        }
        guard let postgres = store as? PostgresModelStore else {
            throw PGModelError(.invalidConfiguration, "a migration needs the direct store (postgres://) or the service (pgmodel://)")
        }
        let session = try bridge.run(timeout: Self.migrationTimeout) { try await postgres.gateway.openMigrationSession() }
        do {
            let (start, stages) = try plan.route(session: session, bridge: bridge)
            let entities = plan.description.entityNames
            guard let targetDescription = plan.description.schema(plan.target) else {
                try? bridge.run { await session.rollback() }
                return finish(.upToDate, from: start, stages: [])
            }
            if start == nil {
                try bridge.run(timeout: Self.migrationTimeout) {
                    try await session.apply(from: SchemaDescription(entities: []), to: targetDescription)
                    try await session.record(targetDescription, entities: entities, stages: [])
                }
                try bridge.run(timeout: Self.migrationTimeout) { try await session.commit() }
                logger.info("created the store at its first version", metadata: ["version": "\(plan.target)"])
                return finish(.created, from: nil, stages: [])
            }
            var reports: [MigrationStageReport] = []
            var done: [MigrationReport.Stage] = []
            for (offset, stage) in stages.enumerated() {
                let described = MigrationProgress.Stage(index: offset + 1, count: stages.count,
                                                        from: Schema.Version(parsing: stage.from) ?? targetVersion,
                                                        to: Schema.Version(parsing: stage.to) ?? targetVersion,
                                                        kind: stage.isCustom ? .custom : .lightweight)
                let report = try run(stage, described: described, plan: plan, session: session, bridge: bridge,
                                     configurations: configurations, logger: logger, progress: progress)
                reports.append(report)
                done.append(MigrationReport.Stage(stage: described, milliseconds: report.milliseconds, rows: report.rows))
            }
            let recorded = try bridge.run(timeout: Self.migrationTimeout) { try await session.recordedVersion(of: entities) }
            if !reports.isEmpty || recorded != plan.target {
                let finished = reports
                try bridge.run(timeout: Self.migrationTimeout) { try await session.record(targetDescription, entities: entities, stages: finished) }
            }
            try bridge.run(timeout: Self.migrationTimeout) { try await session.commit() }
            if !reports.isEmpty {
                logger.info("migrated the store", metadata: ["from": "\(start ?? "")", "to": "\(plan.target)", "stages": "\(reports.count)"])
            }
            return finish(done.isEmpty ? .upToDate : .migrated, from: start, stages: done)
        } catch {
            try? bridge.run { await session.rollback() }
            throw error
        }
    }

    /// Runs one stage: `willMigrate` on the old version, the schema change, `didMigrate` on the new one,
    /// telling `progress` each step as it begins. Any failure becomes `migration_failed` naming the stage
    /// and the step, which `progress` hears before the caller does.
    private static func run(_ stage: MigrationPlanDescription.Stage, described: MigrationProgress.Stage, plan: PlanContext,
                            session: SchemaMigrationSession, bridge: BlockingBridge, configurations: [ModelConfiguration], logger: Logger,
                            progress: @Sendable (MigrationProgress) -> Void) throws -> MigrationStageReport {
        guard let old = plan.schemas[stage.from], let new = plan.schemas[stage.to] else {
            throw PGModelError(.internalError, "the migration plan lost the schemas of its \(stage)")
        }
        progress(.stageStarted(described))
        let started = ContinuousClock.now
        let declared = plan.stage(from: stage.from, to: stage.to)
        var step = MigrationProgress.Step.willMigrate
        do {
            if case .custom(_, _, let willMigrate?, _) = declared {
                progress(.stepStarted(described, .willMigrate))
                try runInContext(willMigrate, schema: old, session: session, bridge: bridge, configurations: configurations)
            }
            let oldDescription = old.schemaDescription, newDescription = new.schemaDescription
            step = .schemaChange(statements: 0)
            // Counted before they run so the step's event can say how many there are.
            let statements = try bridge.run(timeout: Self.migrationTimeout) { try await session.statements(from: oldDescription, to: newDescription) }
            step = .schemaChange(statements: statements.count)
            progress(.stepStarted(described, step))
            let rows = try bridge.run(timeout: Self.migrationTimeout) { try await session.apply(from: oldDescription, to: newDescription) }
            step = .didMigrate
            if case .custom(_, _, _, let didMigrate?) = declared {
                progress(.stepStarted(described, .didMigrate))
                try runInContext(didMigrate, schema: new, session: session, bridge: bridge, configurations: configurations)
            }
            let milliseconds = (ContinuousClock.now - started).wholeMilliseconds
            logger.info("migration stage done", metadata: [
                "stage": "\(stage)", "milliseconds": "\(milliseconds)", "rows": "\(MigrationReport.rowsText(rows))",
            ])
            progress(.stageFinished(described, milliseconds: milliseconds, rows: rows))
            return MigrationStageReport(from: stage.from, to: stage.to, kind: stage.isCustom ? "custom" : "lightweight",
                                        milliseconds: milliseconds, rows: rows)
        } catch {
            logger.error("migration stage failed; rolling back", metadata: ["stage": "\(stage)", "step": "\(step.failureName)"])
            let failure = PGModelError.migrationFailed(stage, step: step.failureName, error)
            progress(.stageFailed(described, step: step, error: failure))
            throw failure
        }
    }

    /// Calls a stage closure with a context on `schema` inside the migration, and saves what it left
    /// unsaved (its changes belong to the migration either way).
    private static func runInContext(_ body: @Sendable (ModelContext) throws -> Void, schema: Schema, session: SchemaMigrationSession,
                                     bridge: BlockingBridge, configurations: [ModelConfiguration]) throws {
        let container = ModelContainer(stage: schema, store: session.store(for: schema.schemaDescription), bridge: bridge,
                                       configurations: configurations)
        let context = ModelContext(container)
        try body(context)
        if context.hasChanges { try context.save() }
    }
}

/// A migration plan with its Swift schemas and its description.
private struct PlanContext {
    let plan: any SchemaMigrationPlan.Type
    let description: MigrationPlanDescription
    /// Each version's schema by version string.
    let schemas: [String: Schema]
    let target: String

    init(_ plan: any SchemaMigrationPlan.Type, target: Schema) throws {
        self.plan = plan
        var schemas: [String: Schema] = [:]
        for versioned in plan.schemas {
            schemas[versioned.versionIdentifier.description] = Schema(versionedSchema: versioned)
        }
        self.schemas = schemas
        let stages = plan.stages.map {
            MigrationPlanDescription.Stage(from: $0.fromVersion.versionIdentifier.description, to: $0.toVersion.versionIdentifier.description,
                                           isCustom: $0.isCustom)
        }
        self.description = MigrationPlanDescription(
            schemas: plan.schemas.map { versioned in
                schemas[versioned.versionIdentifier.description]?.schemaDescription ?? SchemaDescription(entities: [])
            },
            stages: stages)
        try description.validate()
        for schema in description.schemas { try schema.validate() }
        self.target = target.version.description
        guard schemas[self.target] != nil else {
            throw PGModelError(.invalidSchema,
                "the container's schema version \(target.version) is not one of the migration plan's (\(description.schemas.map(\.version).joined(separator: ", ")))")
        }
    }

    /// The declared stage between two versions, if any.
    func stage(from: String, to: String) -> MigrationStage? {
        plan.stages.first { $0.fromVersion.versionIdentifier.description == from && $0.toVersion.versionIdentifier.description == to }
    }

    /// The store's version and the stages from it to the target, read inside the migration's transaction.
    func route(session: SchemaMigrationSession, bridge: BlockingBridge) throws -> (start: String?, stages: [MigrationPlanDescription.Stage]) {
        let entities = description.entityNames
        let (registered, recorded) = try bridge.run(timeout: ModelContainer.migrationTimeout) {
            (try await session.registered(), try await session.recordedVersion(of: entities))
        }
        return try description.route(registered: registered, recorded: recorded, target: target)
    }
}

extension Schema.Version {
    /// `"2.0.0"` as a version.
    init?(parsing text: String) {
        let parts = text.split(separator: ".").map { Int($0) }
        guard parts.count == 3, let major = parts[0], let minor = parts[1], let patch = parts[2] else { return nil }
        self.init(major, minor, patch)
    }
}
