import Logging
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO

extension DatabaseGateway {
    /// A service client's migration (`migrate`): moves the plan's entities from the store's version to
    /// `schema.version` in one transaction. Only an admin may, and only through lightweight stages (a
    /// custom stage's code lives in the app: it runs on the direct store); anyone else whose store is
    /// behind gets `schema_version_mismatch`. A store already at the version changes nothing.
    ///
    /// ```swift
    /// try await gateway.migrate(to: v2, plan: plan, as: requester)
    /// ```
    package func migrate(to schema: SchemaDescription, plan: MigrationPlanDescription, as requester: Requester,
                         budget: RequestBudget = RequestBudget()) async throws {
        try await traced("migrate", entity: nil) {
            try plan.validate()
            for version in plan.schemas { try version.validate() }
            guard let target = plan.schema(schema.version), target.entities.map(\.shape) == schema.entities.map(\.shape) else {
                throw PGModelError(.invalidSchema, "the schema of version \(schema.version) is not the migration plan's")
            }
            // Rights first: anyone but an admin only learns whether the store is at the version already, from a
            // pooled connection, without opening a connection of their own or waiting for the store-wide lock.
            guard requester.isAdmin else {
                let engine = engine
                let recorded = try await pool.withConnection(scope: .trusted, deadline: callTimeout(budget), operation: "schema version check") {
                    try await engine.recordedVersion(of: plan.entityNames, on: $0)
                }
                guard recorded == schema.version else {
                    throw PGModelError(.schemaVersionMismatch,
                        "the store is at schema version \(recorded ?? "none") and this app at \(schema.version); only an admin may migrate it",
                        model: schema.entities.first?.name)
                }
                return
            }
            let session = try await openMigrationSession(budget: budget)
            do {
                let registered = try await session.registered()
                let recorded = try await session.recordedVersion(of: plan.entityNames)
                let (start, stages) = try plan.route(registered: registered, recorded: recorded, target: schema.version)
                guard start == nil || !stages.isEmpty || recorded != schema.version else {
                    await session.rollback()
                    return
                }
                guard requester.isAdmin else {
                    throw PGModelError(.schemaVersionMismatch,
                        "the store is at schema version \(start ?? "none") and this app at \(schema.version); only an admin may migrate it",
                        model: schema.entities.first?.name)
                }
                if let custom = stages.first(where: \.isCustom) {
                    throw PGModelError(.schemaVersionMismatch,
                        "the store is at schema version \(start ?? "none") and this app at \(schema.version); the plan's \(custom) runs app code, so it must run on the direct store (postgres://), not through the service",
                        model: schema.entities.first?.name)
                }
                var reports: [MigrationStageReport] = []
                if start == nil {
                    try await session.apply(from: SchemaDescription(entities: []), to: target)
                }
                for stage in stages {
                    guard let old = plan.schema(stage.from), let new = plan.schema(stage.to) else { continue }
                    let started = ContinuousClock.now
                    let rows: [String: Int]
                    do {
                        rows = try await session.apply(from: old, to: new)
                    } catch {
                        throw PGModelError.migrationFailed(stage, step: nil, error)
                    }
                    let milliseconds = (ContinuousClock.now - started).wholeMilliseconds
                    logger.info("migration stage done", metadata: ["stage": "\(stage)", "milliseconds": "\(milliseconds)"])
                    reports.append(MigrationStageReport(from: stage.from, to: stage.to, kind: "lightweight", milliseconds: milliseconds, rows: rows))
                }
                try await session.record(target, entities: plan.entityNames, stages: reports)
                try await session.commit()
            } catch {
                await session.rollback()
                throw error
            }
        }
    }
}
