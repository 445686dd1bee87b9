import Foundation
import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres

/// The schema and the store behind your models. Sendable: share one container across tasks and
/// actors, and give each its own `ModelContext`.
///
/// Creating a container connects to the store and creates any missing tables, constraints and
/// indexes (or registers the schema with the service).
///
/// ```swift
/// let container = try ModelContainer(for: Trip.self, BucketListItem.self,
///     configurations: ModelConfiguration(url: URL(string: "postgres://pgmodel:pgmodel@127.0.0.1:55432/pgmodel")!))
/// let context = ModelContext(container)
/// ```
public final class ModelContainer: Sendable {
    /// The models this container manages.
    public let schema: Schema
    /// The configurations given. A container keeps all its models in one store: several configurations
    /// must name the same store (URL and `isStoredInMemoryOnly`), else the container throws
    /// `invalid_configuration`.
    public let configurations: [ModelConfiguration]
    /// The migration plan the container was opened with, if any.
    ///
    /// ```swift
    /// if let plan = container.migrationPlan { print(plan.schemas.count) }
    /// ```
    public let migrationPlan: (any SchemaMigrationPlan.Type)?
    let store: any ModelStore
    /// The store's name in `PersistentIdentifier.storeIdentifier` (see ``ModelStores/identifier(of:)``).
    var storeIdentifier: String? { ModelStores.identifier(of: store) }
    let bridge: BlockingBridge
    /// The shared reader of the history log behind `ResultsObserver` and `HistoryObserver`; idle until
    /// the first observer registers.
    let historyFeed: HistoryFeed
    private let mainContextBox: MainContextBox
    /// What ``lastDeleteAllDataError`` reports.
    let deleteAllDataError = NIOLockedValueBox<PGModelError?>(nil)
    /// Predicate and sort translations by shape, shared by every context of the container (its schema's).
    let translations = TranslationCache()

    /// A container for `forTypes`.
    public convenience init(for forTypes: any PersistentModel.Type..., migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
                            configurations: ModelConfiguration...) throws {
        try self.init(for: Schema(forTypes), migrationPlan: migrationPlan, configurations: configurations)
    }

    /// A container for `givenSchema`.
    public convenience init(for givenSchema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
                            configurations: ModelConfiguration...) throws {
        try self.init(for: givenSchema, migrationPlan: migrationPlan, configurations: configurations)
    }

    /// A container for `givenSchema` with the first of `configurations` (or the default one).
    ///
    /// With a `migrationPlan`, the store is first moved from its version to `givenSchema.version`
    /// through the plan's stages, all in one transaction (see ``SchemaMigrationPlan``):
    ///
    /// ```swift
    /// let container = try ModelContainer(for: Schema(versionedSchema: SampleTripsSchemaV4.self),
    ///                                    migrationPlan: SampleTripsMigrationPlan.self, configurations: [configuration])
    /// ```
    public init(for givenSchema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)? = nil, configurations: [ModelConfiguration]) throws {
        let configuration = configurations.first ?? ModelConfiguration()
        try configuration.validate()
        for other in configurations.dropFirst()
        where other.url != configuration.url || other.isStoredInMemoryOnly != configuration.isStoredInMemoryOnly {
            throw PGModelError(.invalidConfiguration,
                "configuration '\(other.name)' names another store than '\(configuration.name)': a PGModel container keeps all its models in one PostgreSQL store; open one container per store")
        }
        let schema = configuration.schema ?? givenSchema
        guard !schema.entities.isEmpty else {
            throw PGModelError(.invalidSchema, "a ModelContainer needs at least one model type")
        }
        for entity in schema.entities {
            for property in entity.propertyMetadata where property.isUnsupported && !property.isEphemeral {
                throw PGModelError(.invalidSchema,
                    "property '\(property.name)' of \(entity.name) has a type PGModel cannot store; make it Codable or use @Attribute(.transformable(by:))",
                    model: entity.name, keyPath: property.name)
            }
        }
        let (store, bridge) = try ModelStores.open(url: configuration.url, isStoredInMemoryOnly: configuration.isStoredInMemoryOnly,
                                                   requestTimeout: try configuration.effectiveRequestTimeout())
        let description = schema.schemaDescription
        do {
            if let migrationPlan {
                try Self.migrate(store, bridge: bridge, to: schema, plan: migrationPlan, configurations: configurations)
            }
            try bridge.run(timeout: bridge.schemaTimeout) { try await store.prepare(description) }
        } catch {
            try? bridge.run { await store.close() }
            throw error
        }
        self.schema = schema
        self.configurations = configurations.isEmpty ? [configuration] : configurations
        self.migrationPlan = migrationPlan
        self.store = store
        self.bridge = bridge
        self.historyFeed = HistoryFeed(store: store, executor: bridge.executor)
        self.mainContextBox = MainContextBox()
    }

    /// The container of one migration stage's `ModelContext`: `schema` is the stage's old or new
    /// version, `store` the migration's transaction.
    init(stage schema: Schema, store: any ModelStore, bridge: BlockingBridge, configurations: [ModelConfiguration]) {
        self.schema = schema
        self.configurations = configurations
        self.migrationPlan = nil
        self.store = store
        self.bridge = bridge
        self.historyFeed = HistoryFeed(store: store, executor: bridge.executor)
        self.mainContextBox = MainContextBox()
    }

    deinit {
        historyFeed.stop()
        let store = store
        Task { await store.close() }
    }

    /// The main-actor context; it autosaves (`autosaveEnabled` is `true`).
    @MainActor public var mainContext: ModelContext {
        if let context = mainContextBox.context { return context }
        let context = ModelContext(self)
        context.autosaveEnabled = true
        context.isMainContext = true
        mainContextBox.context = context
        return context
    }

    /// Closes the container's connections now rather than when it is deallocated.
    public func close() async {
        historyFeed.stop()
        await store.close()
    }

    var allowsSave: Bool { configurations.first?.allowsSave ?? true }
}

/// Holds the main context; main-actor isolated, hence Sendable inside the container.
@MainActor
private final class MainContextBox {
    var context: ModelContext?
    nonisolated init() {}
}
