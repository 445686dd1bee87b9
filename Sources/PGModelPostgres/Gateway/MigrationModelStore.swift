@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO

/// The store a migration stage's `ModelContext` works on: the migration's own transaction, with the
/// stage's version of the schema (the old one in `willMigrate`, the new one in `didMigrate`). Each
/// call runs in a savepoint, so one the app catches with `try?` leaves the migration usable.
///
/// ```swift
/// let store = session.store(for: v1)
/// let rows = try await store.fetch(FetchRequest(entity: "Trip"))
/// ```
struct MigrationModelStore: ModelStore {
    let session: SchemaMigrationSession
    let schema: SchemaDescription

    func prepare(_ schema: SchemaDescription) async throws {}

    func fetch(_ request: FetchRequest) async throws -> [FetchedRow] {
        let schema = schema
        return try await session.call { try await $0.fetch(request, in: schema, as: .trusted, on: $1) }
    }

    func fetchTable(_ request: FetchRequest) async throws -> FetchedTable {
        let schema = schema
        return try await session.call { try await $0.fetchTable(request, in: schema, as: .trusted, on: $1) }
    }

    func count(_ request: FetchRequest) async throws -> Int {
        let schema = schema
        return try await session.call { try await $0.count(request, in: schema, as: .trusted, on: $1) }
    }

    func fetchIdentifiers(_ request: FetchRequest) async throws -> [RowReference] {
        let schema = schema
        return try await session.call { try await $0.fetchIdentifiers(request, in: schema, as: .trusted, on: $1) }
    }

    func save(_ request: SaveRequest) async throws -> SaveResult {
        let schema = schema
        return try await session.call { try await $0.save(request, in: schema, as: .trusted, on: $1) }
    }

    func fetchHistory(_ request: HistoryRequest) async throws -> HistoryPage {
        try await session.call { try await $0.fetchHistory(request, as: .trusted, on: $1) }
    }

    func deleteHistory(_ request: HistoryRequest) async throws -> Int {
        try await session.call { try await $0.deleteHistory(request, as: .trusted, on: $1) }
    }

    func sharing(of record: RowReference) async throws -> RecordSharing {
        let schema = schema
        return try await session.call { try await $0.sharing(of: record, in: schema, as: .trusted, on: $1) }
    }

    func changeSignals() -> AsyncStream<ChangeSignal> {
        AsyncStream { $0.finish() }
    }

    func close() async {}
}
