import Foundation
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelCore
import Testing
import PGModelTesting

/// `ModelContainer.migrate(for:migrationPlan:configurations:progress:)` and the `migrate` command line
/// on a real PostgreSQL store: the events of a two-stage plan in order, a store with nothing to do, a
/// failing stage that leaves the store as it was, the runner's JSON lines and its dry run.
@Suite("Migration progress and the migrate command")
struct MigrationProgressTests {
    typealias V1 = SampleTripsSchemaV1
    typealias V2 = SampleTripsSchemaV2
    typealias V3 = SampleTripsSchemaV3

    static let target = Schema(versionedSchema: V3.self)

    /// A V1 store of three trips with distinct names (so V2's uniqueness holds without a custom stage),
    /// each with two bucket-list items and an accommodation.
    static func populatedV1Store() async throws -> (url: URL, schema: String) {
        let schema = TestDatabase.uniqueSchema("migp")
        let url = try TestDatabase.schemaURL(schema)
        try await offCooperativePool {
            let container = try ModelContainer(for: V1.Trip.self, V1.BucketListItem.self, V1.LivingAccommodation.self,
                                               configurations: ModelConfiguration(url: url))
            let context = ModelContext(container)
            for (i, name) in ["Paris", "Rome", "Oslo"].enumerated() {
                let start = MigrationTests.base.addingTimeInterval(Double(i) * 86_400)
                let trip = V1.Trip(name: name, destination: "to \(name)", start_date: start, end_date: start.addingTimeInterval(3_600))
                context.insert(trip)
                trip.bucketList = [V1.BucketListItem(title: "see \(name)"), V1.BucketListItem(title: "eat \(name)")]
                trip.livingAccommodation = V1.LivingAccommodation(address: "1 \(name) street")
            }
            try context.save()
        }
        return (url, schema)
    }

    static func migrate<Plan: SchemaMigrationPlan>(_ plan: Plan.Type, at url: URL, into events: EventLog) async throws -> MigrationReport {
        try await offCooperativePool {
            try ModelContainer.migrate(for: target, migrationPlan: plan, configurations: [ModelConfiguration(url: url)]) { events.append($0) }
        }
    }

    static func versionRows(_ schema: String) async throws -> Int {
        try await Inspect.count("SELECT count(*) FROM pgmodel.schema_versions WHERE schema_name = '\(schema)' AND fingerprint IS NOT NULL")
    }

    @Test("a lightweight and a custom stage report their start, steps and end in order, with rows per entity")
    func eventsInOrder() async throws {
        let (url, schema) = try await Self.populatedV1Store()
        let events = EventLog()
        let report = try await Self.migrate(ProgressPlan.self, at: url, into: events)
        let recorded = events.all
        #expect(recorded.map(\.shape) == [
            "stage_started 1", "step 1 schema_change", "stage_finished 1",
            "stage_started 2", "step 2 will_migrate", "step 2 schema_change", "step 2 did_migrate", "stage_finished 2",
            "finished",
        ])
        let first = MigrationProgress.Stage(index: 1, count: 2, from: Schema.Version(1, 0, 0), to: Schema.Version(2, 0, 0), kind: .lightweight)
        let second = MigrationProgress.Stage(index: 2, count: 2, from: Schema.Version(2, 0, 0), to: Schema.Version(3, 0, 0), kind: .custom)
        #expect(recorded.first == .stageStarted(first))
        #expect(recorded[3] == .stageStarted(second))
        // V1 → V2 adds at least the unique key on the trip's name.
        if case .stepStarted(_, .schemaChange(let statements)) = recorded[1] { #expect(statements > 0) } else { Issue.record("no schema change step") }
        let rows = ["Trip": 3, "BucketListItem": 6, "LivingAccommodation": 3]
        if case .stageFinished(let stage, let milliseconds, let after) = recorded[2] {
            #expect(stage == first)
            #expect(milliseconds >= 0)
            #expect(after == rows)
        } else { Issue.record("no end of stage 1") }
        #expect(report.outcome == .migrated)
        #expect(report.storeVersion == Schema.Version(1, 0, 0))
        #expect(report.targetVersion == Schema.Version(3, 0, 0))
        #expect(report.stages.map(\.stage) == [first, second])
        #expect(report.stages.map(\.rows) == [rows, rows])
        #expect(recorded.last == .finished(report))
        // Every event survives JSON unchanged.
        for event in recorded {
            let decoded = try JSONDecoder().decode(MigrationProgress.self, from: JSONEncoder().encode(event))
            #expect(decoded == event)
        }
        // The custom stage's willMigrate ran on V2, and the store opens as V3 with its data.
        let container = try await offCooperativePool {
            try ModelContainer(for: Self.target, migrationPlan: ProgressPlan.self, configurations: ModelConfiguration(url: url))
        }
        let destinations = try await offCooperativePool {
            try ModelContext(container).fetch(FetchDescriptor<V3.Trip>(sortBy: [SortDescriptor(\.name)])).map(\.destination)
        }
        await container.close()
        #expect(destinations == ["to Oslo (checked)", "to Paris (checked)", "to Rome (checked)"])
        #expect(try await Self.versionRows(schema) == 1)
        try await Inspect.drop(schema)
    }

    @Test("a store at the app's version reports nothing to do and records nothing")
    func upToDate() async throws {
        let (url, schema) = try await Self.populatedV1Store()
        _ = try await Self.migrate(ProgressPlan.self, at: url, into: EventLog())
        let events = EventLog()
        let report = try await Self.migrate(ProgressPlan.self, at: url, into: events)
        #expect(report.outcome == .upToDate)
        #expect(report.storeVersion == Schema.Version(3, 0, 0))
        #expect(report.stages.isEmpty)
        #expect(events.all == [.finished(report)])
        #expect(try await Self.versionRows(schema) == 1)
        try await Inspect.drop(schema)
    }

    @Test("a dry run on a new store shows one stage creating it at the app's version, not the plan's stages")
    func dryRunOnNewStore() async throws {
        let schema = TestDatabase.uniqueSchema("migp")
        let url = try TestDatabase.schemaURL(schema)
        let dryRun = try await offCooperativePool {
            try ModelContainer.migrationDryRun(for: Self.target, migrationPlan: ProgressPlan.self, configurations: [ModelConfiguration(url: url)])
        }
        #expect(dryRun.storeVersion == nil)
        #expect(dryRun.stages.count == 1)
        #expect(dryRun.stages.first?.isCustom == false)
        #expect(dryRun.stages.first?.statements.isEmpty == false)
        #expect(dryRun.description.contains("create the store at 3.0.0:"))
        #expect(!dryRun.description.contains("stage 1.0.0"))
        try await Inspect.drop(schema)
    }

    @Test("a failing custom stage reports its start and the step it failed in, throws migration_failed and changes nothing")
    func failingStage() async throws {
        let (url, schema) = try await Self.populatedV1Store()
        let columns = try await Inspect.columns(schema, "trip")
        let before = try await Inspect.strings("SELECT name || '|' || destination FROM \(schema).trip ORDER BY id")
        let events = EventLog()
        let thrown = await #expect(throws: PGModelError.self) {
            _ = try await Self.migrate(ProgressFailingPlan.self, at: url, into: events)
        }
        #expect(thrown?.code == .migrationFailed)
        #expect(thrown?.message.contains("custom stage 2.0.0 → 3.0.0") == true)
        #expect(thrown?.message.contains("didMigrate") == true)
        let recorded = events.all
        #expect(recorded.map(\.shape) == [
            "stage_started 1", "step 1 schema_change", "stage_finished 1",
            "stage_started 2", "step 2 will_migrate", "step 2 schema_change", "step 2 did_migrate", "stage_failed 2 did_migrate",
        ])
        if case .stageFailed(_, _, let error) = recorded.last { #expect(error == thrown) }
        // Stage 1 had finished, yet its unique key went with stage 2: one transaction.
        #expect(try await Inspect.columns(schema, "trip") == columns)
        #expect(try await Inspect.strings("SELECT conname FROM pg_constraint WHERE conrelid = '\(schema).trip'::regclass AND contype = 'u'") == [])
        #expect(try await Inspect.strings("SELECT name || '|' || destination FROM \(schema).trip ORDER BY id") == before)
        #expect(try await Self.versionRows(schema) == 0)
        try await Inspect.drop(schema)
    }

    @Test("migrate --json prints one JSON object per event and line; without it, a line per stage on standard error")
    func commandLineJSON() async throws {
        let (_, schema) = try await Self.populatedV1Store()
        let base = try TestDatabase.url()
        let output = TextLog(), errors = TextLog()
        let status = try await offCooperativePool {
            MigrationCommandLine.run(arguments: ["--database-url", base, "--schema", schema, "--json"], environment: [:],
                                     schema: Self.target, migrationPlan: ProgressPlan.self,
                                     standardOutput: { output.append($0) }, standardError: { errors.append($0) })
        }
        #expect(status == 0)
        let lines = output.text.split(separator: "\n").map(String.init)
        #expect(lines.count == 9)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["event"] is String)
        }
        let decoded = try lines.map { try JSONDecoder().decode(MigrationProgress.self, from: Data($0.utf8)) }
        #expect(decoded.map(\.shape).first == "stage_started 1")
        guard case .finished(let report) = decoded.last else { Issue.record("no finished event"); return }
        #expect(report.outcome == .migrated)
        #expect(lines.last?.contains("\"target_version\":\"3.0.0\"") == true)
        #expect(errors.text.isEmpty)

        // The human form on another store: one line per stage, then the summary.
        let (_, other) = try await Self.populatedV1Store()
        let humanOut = TextLog(), humanErr = TextLog()
        let humanStatus = try await offCooperativePool {
            MigrationCommandLine.run(arguments: ["--schema", other], environment: ["DATABASE_URL": base],
                                     schema: Self.target, migrationPlan: ProgressPlan.self,
                                     standardOutput: { humanOut.append($0) }, standardError: { humanErr.append($0) })
        }
        #expect(humanStatus == 0)
        let human = humanErr.text.split(separator: "\n").map(String.init)
        #expect(human.count == 3)
        #expect(human.first?.hasPrefix("stage 1/2 lightweight 1.0.0 → 2.0.0: schema change (") == true)
        #expect(human.dropFirst().first?.hasPrefix("stage 2/2 custom 2.0.0 → 3.0.0: willMigrate… schema change (") == true)
        #expect(human.dropFirst().first?.contains("didMigrate… done in ") == true)
        #expect(human.dropFirst().first?.hasSuffix("(BucketListItem=6 LivingAccommodation=3 Trip=3)") == true)
        #expect(human.last?.hasPrefix("migrated the store from 1.0.0 to 3.0.0: 2 stages in ") == true)
        #expect(humanOut.text.isEmpty)
        try await Inspect.drop(schema)
        try await Inspect.drop(other)
    }

    @Test("migrate fails with Error: <sentence> [code] and a non-zero status; bad arguments are refused before connecting")
    func commandLineFailures() async throws {
        let (url, schema) = try await Self.populatedV1Store()
        let output = TextLog(), errors = TextLog()
        let status = try await offCooperativePool {
            MigrationCommandLine.run(arguments: ["--database-url", url.absoluteString, "--json"], environment: [:],
                                     schema: Self.target, migrationPlan: ProgressFailingPlan.self,
                                     standardOutput: { output.append($0) }, standardError: { errors.append($0) })
        }
        #expect(status == 1)
        #expect(errors.text.hasPrefix("Error: the migration's custom stage 2.0.0 → 3.0.0 failed in didMigrate"))
        #expect(errors.text.hasSuffix(" [migration_failed]\n"))
        #expect(output.text.split(separator: "\n").last?.contains("\"event\":\"stage_failed\"") == true)
        #expect(try await Self.versionRows(schema) == 0)

        for (arguments, message) in [
            (["--frobnicate"], "Error: unknown argument '--frobnicate' (see --help) [invalid_arguments]\n"),
            (["--schema"], "Error: --schema needs a value [invalid_arguments]\n"),
            (["--json=yes"], "Error: --json takes no value [invalid_arguments]\n"),
            (["--schema", "a;drop"], "Error: --schema 'a;drop' is not a plain PostgreSQL name (letters, digits, underscores) [invalid_arguments]\n"),
            (["postgres://user:secret@host/db"], "Error: unknown argument (a URL: pass it as --database-url) (see --help) [invalid_arguments]\n"),
            ([], "Error: no store to migrate: pass --database-url or set DATABASE_URL [invalid_arguments]\n"),
        ] {
            let refused = TextLog()
            let code = MigrationCommandLine.run(arguments: arguments, environment: [:], schema: Self.target, migrationPlan: ProgressPlan.self,
                                                standardOutput: { refused.append($0) }, standardError: { refused.append($0) })
            #expect(code == 2)
            #expect(refused.text == message)
        }
        try await Inspect.drop(schema)
    }

    @Test("migrate --dry-run prints each stage's SQL and changes nothing; the app's default store comes before DATABASE_URL")
    func commandLineDryRun() async throws {
        let (url, schema) = try await Self.populatedV1Store()
        let columns = try await Inspect.columns(schema, "trip")
        let output = TextLog(), errors = TextLog()
        let status = try await offCooperativePool {
            // The app's default store wins over DATABASE_URL (here one nothing listens on).
            MigrationCommandLine.run(arguments: ["--dry-run"], environment: ["DATABASE_URL": "postgres://nobody@127.0.0.1:1/nowhere"],
                                     schema: Self.target, migrationPlan: ProgressPlan.self, defaultDatabaseURL: url, standardOutput: { output.append($0) }, standardError: { errors.append($0) })
        }
        #expect(status == 0)
        #expect(output.text.contains("lightweight stage 1.0.0 → 2.0.0:"))
        #expect(output.text.contains("custom stage 2.0.0 → 3.0.0:"))
        #expect(output.text.split(separator: "\n").contains { $0.hasPrefix("  ") && $0.hasSuffix(";") })
        #expect(errors.text == "dry run: nothing was changed\n")
        let json = TextLog()
        let jsonStatus = try await offCooperativePool {
            MigrationCommandLine.run(arguments: ["--dry-run", "--json", "--database-url", url.absoluteString], environment: [:],
                                     schema: Self.target, migrationPlan: ProgressPlan.self, standardOutput: { json.append($0) }, standardError: { json.append($0) })
        }
        #expect(jsonStatus == 0)
        let object = try JSONSerialization.jsonObject(with: Data(json.text.utf8)) as? [String: Any]
        #expect(object?["event"] as? String == "dry_run")
        #expect(object?["store_version"] as? String == "1.0.0")
        #expect((object?["stages"] as? [Any])?.count == 2)
        // Nothing changed: V1's columns, no recorded version, and the real migration still has both stages to run.
        #expect(try await Inspect.columns(schema, "trip") == columns)
        #expect(try await Self.versionRows(schema) == 0)
        let report = try await Self.migrate(ProgressPlan.self, at: url, into: EventLog())
        #expect(report.stages.count == 2)
        try await Inspect.drop(schema)
    }
}

/// V1 → V2 lightweight (renames, a new unique key), V2 → V3 custom: a willMigrate that marks every trip
/// and a didMigrate that reads them on V3.
enum ProgressPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [SampleTripsSchemaV1.self, SampleTripsSchemaV2.self, SampleTripsSchemaV3.self] }
    static var stages: [MigrationStage] {
        [.lightweight(fromVersion: SampleTripsSchemaV1.self, toVersion: SampleTripsSchemaV2.self),
         .custom(fromVersion: SampleTripsSchemaV2.self, toVersion: SampleTripsSchemaV3.self,
                 willMigrate: { context in
                     for trip in try context.fetch(FetchDescriptor<SampleTripsSchemaV2.Trip>()) { trip.destination += " (checked)" }
                 },
                 didMigrate: { context in
                     _ = try context.fetchCount(FetchDescriptor<SampleTripsSchemaV3.Trip>())
                 })]
    }
}

/// The same plan whose didMigrate saves a change, then throws: everything must roll back, stage 1 included.
enum ProgressFailingPlan: SchemaMigrationPlan {
    struct Refused: Error {}
    static var schemas: [any VersionedSchema.Type] { ProgressPlan.schemas }
    static var stages: [MigrationStage] {
        [.lightweight(fromVersion: SampleTripsSchemaV1.self, toVersion: SampleTripsSchemaV2.self),
         .custom(fromVersion: SampleTripsSchemaV2.self, toVersion: SampleTripsSchemaV3.self,
                 willMigrate: { context in
                     for trip in try context.fetch(FetchDescriptor<SampleTripsSchemaV2.Trip>()) { trip.destination += " (checked)" }
                 },
                 didMigrate: { context in
                     for trip in try context.fetch(FetchDescriptor<SampleTripsSchemaV3.Trip>()) { trip.destination = "changed" }
                     try context.save()
                     throw Refused()
                 })]
    }
}

/// The progress events a migration reported, from whichever thread it ran on.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [MigrationProgress] = []
    func append(_ event: MigrationProgress) { lock.lock(); events.append(event); lock.unlock() }
    var all: [MigrationProgress] { lock.lock(); defer { lock.unlock() }; return events }
}

/// What the command line wrote to one stream.
final class TextLog: @unchecked Sendable {
    private let lock = NSLock()
    private var buffer = ""
    func append(_ text: String) { lock.lock(); buffer += text; lock.unlock() }
    var text: String { lock.lock(); defer { lock.unlock() }; return buffer }
}

extension MigrationProgress {
    /// The event without its timings and counts: `step 2 will_migrate`.
    var shape: String {
        switch self {
        case .stageStarted(let stage): return "stage_started \(stage.index)"
        case .stepStarted(let stage, let step): return "step \(stage.index) \(step.name)"
        case .stageFinished(let stage, _, _): return "stage_finished \(stage.index)"
        case .stageFailed(let stage, let step, _): return "stage_failed \(stage.index) \(step.name)"
        case .finished: return "finished"
        }
    }
}
