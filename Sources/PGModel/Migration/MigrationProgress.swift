import Foundation
@_spi(PGModelInternals) import PGModelCore

/// Where a running migration is, as ``ModelContainer/migrate(for:migrationPlan:configurations:progress:)``
/// reports it: each stage's start, its steps, its end (or its failure), then the whole migration's
/// ``MigrationReport``. Codable, so a command line can print each event as one JSON object.
///
/// ```swift
/// try ModelContainer.migrate(for: Schema(versionedSchema: SampleTripsSchemaV4.self),
///                            migrationPlan: SampleTripsMigrationPlan.self, configurations: [configuration]) { event in
///     print(event)   // stage 1/3 custom 1.0.0 → 2.0.0: started …
/// }
/// ```
public enum MigrationProgress: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A stage began; nothing of it has run yet.
    case stageStarted(Stage)
    /// A step of the stage began: `willMigrate`, the schema change or `didMigrate`.
    case stepStarted(Stage, Step)
    /// The stage ran all its steps in `milliseconds`; `rows` counts each entity's rows afterwards. Its
    /// changes commit with the whole migration, not here.
    case stageFinished(Stage, milliseconds: Int, rows: [String: Int])
    /// The stage failed in `step`; `error` is the `migration_failed` error the migration throws next,
    /// and the store keeps its old version and data.
    case stageFailed(Stage, step: Step, error: PGModelError)
    /// The migration committed (or found nothing to do).
    case finished(MigrationReport)

    /// One stage of the route from the store's version to the app's.
    ///
    /// ```swift
    /// if case .stageStarted(let stage) = event { print("\(stage.index)/\(stage.count) \(stage.from) → \(stage.to)") }
    /// ```
    public struct Stage: Sendable, Hashable, Codable {
        /// Its place on the route, from 1.
        public var index: Int
        /// How many stages the route has.
        public var count: Int
        /// The version it starts from.
        public var from: Schema.Version
        /// The version it ends at.
        public var to: Schema.Version
        /// Whether app code runs in it.
        public var kind: MigrationStageKind

        /// A stage description; the migration makes these, tests and tools may too.
        ///
        /// ```swift
        /// let stage = MigrationProgress.Stage(index: 1, count: 1, from: Schema.Version(1, 0, 0), to: Schema.Version(2, 0, 0), kind: .lightweight)
        /// ```
        public init(index: Int, count: Int, from: Schema.Version, to: Schema.Version, kind: MigrationStageKind) {
            self.index = index
            self.count = count
            self.from = from
            self.to = to
            self.kind = kind
        }

        enum CodingKeys: String, CodingKey { case index, count, from, to, kind }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(index: try container.decode(Int.self, forKey: .index), count: try container.decode(Int.self, forKey: .count),
                      from: try container.decodeVersion(forKey: .from), to: try container.decodeVersion(forKey: .to),
                      kind: try container.decode(MigrationStageKind.self, forKey: .kind))
        }

        // Versions travel as "1.0.0", the form logs, `pgmodel schema` and the version table use.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(index, forKey: .index)
            try container.encode(count, forKey: .count)
            try container.encode(from.description, forKey: .from)
            try container.encode(to.description, forKey: .to)
            try container.encode(kind, forKey: .kind)
        }
    }

    /// A step inside a stage, in the order they run.
    ///
    /// ```swift
    /// if case .stepStarted(_, .schemaChange(let statements)) = event { print("\(statements) statements") }
    /// ```
    public enum Step: Sendable, Hashable, Codable {
        /// The stage's `willMigrate`, on a context of the old version.
        case willMigrate
        /// The DDL and data moves between the two versions: `statements` SQL statements.
        case schemaChange(statements: Int)
        /// The stage's `didMigrate`, on a context of the new version.
        case didMigrate

        /// Its name in JSON and in `migration_failed` messages' terms.
        public var name: String {
            switch self {
            case .willMigrate: return "will_migrate"
            case .schemaChange: return "schema_change"
            case .didMigrate: return "did_migrate"
            }
        }

        enum CodingKeys: String, CodingKey { case step, statements }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            switch try container.decode(String.self, forKey: .step) {
            case "will_migrate": self = .willMigrate
            case "schema_change": self = .schemaChange(statements: try container.decodeIfPresent(Int.self, forKey: .statements) ?? 0)
            case "did_migrate": self = .didMigrate
            case let other:
                throw DecodingError.dataCorruptedError(forKey: .step, in: container, debugDescription: "no migration step is named '\(other)'")
            }
        }

        // Flat (`"step": "schema_change", "statements": 4`) so a JSON line reads without nesting.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .step)
            if case .schemaChange(let statements) = self { try container.encode(statements, forKey: .statements) }
        }
    }

    /// The event's name in JSON: `stage_started`, `step`, `stage_finished`, `stage_failed`, `finished`.
    public var event: String {
        switch self {
        case .stageStarted: return "stage_started"
        case .stepStarted: return "step"
        case .stageFinished: return "stage_finished"
        case .stageFailed: return "stage_failed"
        case .finished: return "finished"
        }
    }

    /// One line for a person: `stage 2/3 custom 1.0.0 → 2.0.0: started`.
    public var description: String {
        switch self {
        case .stageStarted(let stage): return "\(stage.label): started"
        case .stepStarted(let stage, let step): return "\(stage.label): \(step.label)"
        case .stageFinished(let stage, let milliseconds, let rows):
            return "\(stage.label): done in \(milliseconds) ms (\(MigrationReport.rowsText(rows)))"
        case .stageFailed(let stage, let step, let error): return "\(stage.label): failed in \(step.label): \(error.message) [\(error.code)]"
        case .finished(let report): return report.description
        }
    }

    enum CodingKeys: String, CodingKey { case event, stage, milliseconds, rows, error, report }
    enum ErrorKeys: String, CodingKey { case code, message }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let event = try container.decode(String.self, forKey: .event)
        switch event {
        case "stage_started": self = .stageStarted(try container.decode(Stage.self, forKey: .stage))
        case "step": self = .stepStarted(try container.decode(Stage.self, forKey: .stage), try Step(from: decoder))
        case "stage_finished":
            self = .stageFinished(try container.decode(Stage.self, forKey: .stage), milliseconds: try container.decode(Int.self, forKey: .milliseconds),
                                  rows: try container.decode([String: Int].self, forKey: .rows))
        case "stage_failed":
            let error = try container.nestedContainer(keyedBy: ErrorKeys.self, forKey: .error)
            self = .stageFailed(try container.decode(Stage.self, forKey: .stage), step: try Step(from: decoder),
                                error: PGModelError(PGModelError.Code(rawValue: try error.decode(String.self, forKey: .code)),
                                                    try error.decode(String.self, forKey: .message)))
        case "finished": self = .finished(try container.decode(MigrationReport.self, forKey: .report))
        default:
            throw DecodingError.dataCorruptedError(forKey: .event, in: container, debugDescription: "no migration event is named '\(event)'")
        }
    }

    // One flat object per event (`{"event": "step", "stage": {…}, "step": "will_migrate"}`), the shape of a
    // JSON-lines stream that `jq` and log shippers read line by line.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(event, forKey: .event)
        switch self {
        case .stageStarted(let stage):
            try container.encode(stage, forKey: .stage)
        case .stepStarted(let stage, let step):
            try container.encode(stage, forKey: .stage)
            try step.encode(to: encoder)
        case .stageFinished(let stage, let milliseconds, let rows):
            try container.encode(stage, forKey: .stage)
            try container.encode(milliseconds, forKey: .milliseconds)
            try container.encode(rows, forKey: .rows)
        case .stageFailed(let stage, let step, let error):
            try container.encode(stage, forKey: .stage)
            try step.encode(to: encoder)
            var nested = container.nestedContainer(keyedBy: ErrorKeys.self, forKey: .error)
            try nested.encode(error.code.rawValue, forKey: .code)
            try nested.encode(error.message, forKey: .message)
        case .finished(let report):
            try container.encode(report, forKey: .report)
        }
    }
}

/// Whether a stage runs app code, as ``MigrationStage`` declares it.
///
/// ```swift
/// if stage.kind == .custom { print("runs willMigrate/didMigrate") }
/// ```
public enum MigrationStageKind: String, Sendable, Hashable, Codable {
    /// ``MigrationStage/lightweight(fromVersion:toVersion:)``, or consecutive versions with no declared stage.
    case lightweight
    /// ``MigrationStage/custom(fromVersion:toVersion:willMigrate:didMigrate:)``.
    case custom
}

/// What a migration did: the store's version before, the app's, and each stage with its duration and
/// the rows per entity after it.
///
/// ```swift
/// let report = try ModelContainer.migrate(for: schema, migrationPlan: Plan.self, configurations: [configuration])
/// if report.outcome == .upToDate { print("nothing to do") }
/// ```
public struct MigrationReport: Sendable, Hashable, Codable, CustomStringConvertible {
    /// What the migration found and did.
    public enum Outcome: String, Sendable, Hashable, Codable {
        /// The store was already at the app's version: nothing ran.
        case upToDate = "up_to_date"
        /// The store held none of the plan's models: its tables were created at the app's version.
        case created
        /// The stages ran and committed.
        case migrated
        /// The store is the service (`pgmodel://`), which ran the plan's lightweight stages itself and
        /// reports no stages.
        case service
    }

    /// One stage that ran.
    ///
    /// ```swift
    /// for stage in report.stages { print(stage.stage.from, "→", stage.stage.to, stage.milliseconds, "ms") }
    /// ```
    public struct Stage: Sendable, Hashable, Codable {
        /// Which stage.
        public var stage: MigrationProgress.Stage
        /// How long its steps took.
        public var milliseconds: Int
        /// Rows per entity after it.
        public var rows: [String: Int]

        /// A stage's report; the migration makes these.
        ///
        /// ```swift
        /// let done = MigrationReport.Stage(stage: stage, milliseconds: 12, rows: ["Trip": 4])
        /// ```
        public init(stage: MigrationProgress.Stage, milliseconds: Int, rows: [String: Int]) {
            self.stage = stage
            self.milliseconds = milliseconds
            self.rows = rows
        }
    }

    /// What happened.
    public var outcome: Outcome
    /// The version the store was at; `nil` for a store that held none of the plan's models (or the service).
    public var storeVersion: Schema.Version?
    /// The app's version, where the store is now.
    public var targetVersion: Schema.Version
    /// The stages that ran, in order; empty when there was nothing to migrate.
    public var stages: [Stage]
    /// How long the whole migration took, its commit included.
    public var milliseconds: Int

    /// A report; the migration makes these.
    ///
    /// ```swift
    /// let report = MigrationReport(outcome: .upToDate, storeVersion: Schema.Version(2, 0, 0), targetVersion: Schema.Version(2, 0, 0), stages: [], milliseconds: 3)
    /// ```
    public init(outcome: Outcome, storeVersion: Schema.Version?, targetVersion: Schema.Version, stages: [Stage], milliseconds: Int) {
        self.outcome = outcome
        self.storeVersion = storeVersion
        self.targetVersion = targetVersion
        self.stages = stages
        self.milliseconds = milliseconds
    }

    public var description: String {
        switch outcome {
        case .upToDate: return "the store is at \(targetVersion): nothing to migrate"
        case .created: return "created the store at \(targetVersion) in \(milliseconds) ms"
        case .migrated:
            return "migrated the store from \(storeVersion?.description ?? "?") to \(targetVersion): \(stages.count) stage\(stages.count == 1 ? "" : "s") in \(milliseconds) ms"
        case .service: return "the service migrated the store to \(targetVersion)"
        }
    }

    /// `Trip=4 BucketListItem=8`, entities in name order.
    static func rowsText(_ rows: [String: Int]) -> String {
        rows.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }

    enum CodingKeys: String, CodingKey { case outcome, storeVersion = "store_version", targetVersion = "target_version", stages, milliseconds }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(outcome: try container.decode(Outcome.self, forKey: .outcome),
                  storeVersion: container.contains(.storeVersion) ? try container.decodeVersion(forKey: .storeVersion) : nil,
                  targetVersion: try container.decodeVersion(forKey: .targetVersion),
                  stages: try container.decode([Stage].self, forKey: .stages),
                  milliseconds: try container.decode(Int.self, forKey: .milliseconds))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(outcome, forKey: .outcome)
        try container.encodeIfPresent(storeVersion?.description, forKey: .storeVersion)
        try container.encode(targetVersion.description, forKey: .targetVersion)
        try container.encode(stages, forKey: .stages)
        try container.encode(milliseconds, forKey: .milliseconds)
    }
}

extension MigrationProgress.Stage {
    /// `stage 2/3 custom 1.0.0 → 2.0.0`.
    var label: String { "stage \(index)/\(count) \(kind.rawValue) \(from) → \(to)" }
}

extension MigrationProgress.Step {
    /// `willMigrate`, `schema change (4 statements)`, `didMigrate`: the closures' own names.
    var label: String {
        switch self {
        case .willMigrate: return "willMigrate"
        case .schemaChange(let statements): return "schema change (\(statements) statement\(statements == 1 ? "" : "s"))"
        case .didMigrate: return "didMigrate"
        }
    }
}

extension KeyedDecodingContainer {
    /// A version written as `"1.0.0"`.
    func decodeVersion(forKey key: Key) throws -> Schema.Version {
        let text = try decode(String.self, forKey: key)
        guard let version = Schema.Version(parsing: text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "'\(text)' is not a version (major.minor.patch)")
        }
        return version
    }
}

extension MigrationProgress.Step {
    /// The step as `migration_failed` messages have always named it.
    var failureName: String {
        switch self {
        case .willMigrate: return "willMigrate"
        case .schemaChange: return "the schema change"
        case .didMigrate: return "didMigrate"
        }
    }
}
