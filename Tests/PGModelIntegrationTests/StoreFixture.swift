import Foundation
import PGModel
import Testing

/// The two ways an app reaches its data; the behaviour suite runs against both.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    /// `postgres://` — the app's own connections.
    case direct
    /// `pgmodel://` — through the line-protocol service, logged in as a fresh user.
    case service

    var testDescription: String { rawValue }
}

/// A container on a fresh store for one test, plus a token to make unique values unique across tests
/// that share a table (service tests share one server schema; their rows are separated by owner).
struct StoreFixture {
    let container: ModelContainer
    let token: String
    /// The store's URL: another container on it stands in for another process on the same database
    /// (or, through the service, another client of the same user).
    let url: URL
    let types: [any PersistentModel.Type]

    static func make(_ kind: StoreKind, _ types: [any PersistentModel.Type], service: TestService? = nil,
                     requestTimeout: Duration? = nil) async throws -> StoreFixture {
        let token = String(UUID().uuidString.prefix(8)).lowercased()
        switch kind {
        case .direct:
            let url = try TestDatabase.schemaURL()
            var configuration = ModelConfiguration(url: url)
            configuration.requestTimeout = requestTimeout
            let chosenConfiguration = configuration
            let schema = Schema(types)
            // Creating a container blocks until its schema is in place, and schema work is serialized by
            // an advisory lock that an in-process service's `register` may hold: on a cooperative thread
            // this would starve the very service it waits for.
            let container = try await offCooperativePool { try ModelContainer(for: schema, configurations: chosenConfiguration) }
            return StoreFixture(container: container, token: token, url: url, types: types)
        case .service:
            let chosen: TestService
            if let service { chosen = service } else { chosen = try await TestService.shared() }
            let service = chosen
            let schema = Schema(types)
            try await service.register(schema)
            let url = try await service.newUserURL()
            var configuration = ModelConfiguration(url: url)
            configuration.requestTimeout = requestTimeout
            let chosenConfiguration = configuration
            let container = try await offCooperativePool { try ModelContainer(for: schema, configurations: chosenConfiguration) }
            return StoreFixture(container: container, token: token, url: url, types: types)
        }
    }

    /// A new context on the fixture's container; each call is another context, as another task would have.
    func newContext() -> ModelContext { ModelContext(container) }

    /// A second container on the same store, with its own connections: what another process sees.
    /// Blocking: call it inside `offCooperativePool`.
    func otherProcess() throws -> ModelContainer {
        try ModelContainer(for: Schema(types), configurations: ModelConfiguration(url: url))
    }
}

extension StoreFixture: @unchecked Sendable {}  // metatypes and a Sendable container

/// Runs SwiftData-style synchronous code on a thread of its own and awaits it.
///
/// The synchronous API blocks its caller until the store answers. An app's service runs in another
/// process, but these tests run the service in-process on Swift's cooperative pool (two threads on a
/// 2-core machine); test bodies that blocked those threads would starve the very server they wait for.
func offCooperativePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.stackSize = 4 << 20
        thread.start()
    }
}
