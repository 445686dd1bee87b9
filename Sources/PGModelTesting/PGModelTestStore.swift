import Foundation
import PGModel

/// The two ways an app reaches its data. A test that takes a kind as its argument runs on both.
///
/// ```swift
/// @Test(arguments: PGModelStoreKind.allCases)
/// func tripsAreSaved(kind: PGModelStoreKind) async throws {
///     let store = try await PGModelTestStore.make(kind, for: [Trip.self])
///     let context = store.newContext()
///     // …
/// }
/// ```
public enum PGModelStoreKind: String, CaseIterable, Sendable, CustomStringConvertible {
    /// `postgres://`: the app's own connections to PostgreSQL.
    case direct
    /// `pgmodel://`: through a `pgmodel serve` instance, logged in as a user of its own.
    case service

    public var description: String { rawValue }
}

/// A container on a fresh store of either kind, for one test.
///
/// The direct kind gets a PostgreSQL schema of its own in ``PGModelTestDatabase``; the service kind
/// registers the models with a ``PGModelTestService`` as its admin (only admins create tables) and logs
/// in as a new user, so tests that share the service are kept apart by ownership, as users are.
///
/// ```swift
/// let store = try await PGModelTestStore.make(.service, for: [Trip.self, Stop.self])
/// let context = store.newContext()
/// context.insert(Trip(name: "Oslo"))
/// try context.save()
/// ```
public struct PGModelTestStore: Sendable {
    /// Which store this is.
    public let kind: PGModelStoreKind
    /// The container every context of the test comes from.
    public let container: ModelContainer
    /// The store's URL: another container on it stands in for another process of the same user.
    public let url: URL
    /// The models' schema.
    public let schema: Schema

    /// Makes a store of `kind` for `types`. `service` defaults to one service this process starts on
    /// first use; `configure` may change the configuration (time limits, for example) before the
    /// container opens.
    public static func make(_ kind: PGModelStoreKind, for types: [any PersistentModel.Type],
                            service: PGModelTestService? = nil,
                            configure: @escaping @Sendable (inout ModelConfiguration) -> Void = { _ in }) async throws -> PGModelTestStore {
        let schema = Schema(types)
        let url: URL
        switch kind {
        case .direct:
            url = try PGModelTestDatabase.url(schemaName: PGModelTestDatabase.uniqueSchemaName())
        case .service:
            let chosen: PGModelTestService
            if let service { chosen = service } else { chosen = try await PGModelTestService.shared() }
            try await chosen.register(schema)
            url = try await chosen.makeUser()
        }
        // Opening a container blocks until its schema is in place; see `offCooperativePool`.
        let container = try await offCooperativePool {
            var configuration = ModelConfiguration(url: url)
            configure(&configuration)
            return try ModelContainer(for: schema, configurations: configuration)
        }
        return PGModelTestStore(kind: kind, container: container, url: url, schema: schema)
    }

    /// A new context on the store's container; each call is another context, as another task would have.
    public func newContext() -> ModelContext { ModelContext(container) }

    /// A second container on the same store, with connections of its own: what another process of the
    /// same user sees. It blocks while it opens: call it inside ``offCooperativePool(_:)``.
    public func otherProcess() throws -> ModelContainer {
        try ModelContainer(for: schema, configurations: ModelConfiguration(url: url))
    }
}

/// Runs synchronous SwiftData-style code on a thread of its own and awaits it.
///
/// The synchronous API blocks its caller until the store answers. A test that runs the service in its
/// own process (``PGModelTestService``) runs it on Swift's cooperative pool, which has one thread per
/// core: a test body that blocked those threads would starve the very server it waits for.
///
/// ```swift
/// let titles = try await offCooperativePool {
///     try ModelContext(container).fetch(FetchDescriptor<Trip>()).map(\.name)
/// }
/// ```
@discardableResult
public func offCooperativePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.stackSize = 4 << 20
        thread.start()
    }
}
