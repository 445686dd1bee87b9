import Foundation
@_spi(PGModelInternals) import PGModel
import PGModelTesting
import Testing

/// The behaviour suite's name for PGModelTesting's store kinds.
typealias StoreKind = PGModelStoreKind

extension PGModelStoreKind: CustomTestStringConvertible {
    public var testDescription: String { rawValue }
}

extension StoreKind {
    /// The stores the behaviour suite runs against.
    static let tested: [StoreKind] = StoreKind.allCases
    /// Stores whose history feeds observers.
    static let observed: [StoreKind] = StoreKind.allCases
}

/// PGModelTesting's store for one test, plus a token that makes unique values unique across tests that
/// share a table (service tests share one server schema; their rows are separated by owner).
struct StoreFixture: Sendable {
    let store: PGModelTestStore
    let token: String

    var container: ModelContainer { store.container }
    /// The store's URL: another container on it stands in for another process on the same database
    /// (or, through the service, another client of the same user).
    var url: URL { store.url }

    static func make(_ kind: StoreKind, _ types: [any PersistentModel.Type], service: TestService? = nil,
                     requestTimeout: Duration? = nil) async throws -> StoreFixture {
        let shared: TestService
        if let service { shared = service } else { shared = try await TestService.shared() }
        let chosen = try await shared.service()
        let store = try await PGModelTestStore.make(kind, for: types, service: chosen) { configuration in
            configuration.requestTimeout = requestTimeout
        }
        return StoreFixture(store: store, token: String(UUID().uuidString.prefix(8)).lowercased())
    }

    /// A new context on the fixture's container; each call is another context, as another task would have.
    func newContext() -> ModelContext { store.newContext() }

    /// A second container on the same store, with its own connections: what another process sees.
    /// Blocking: call it inside `offCooperativePool`.
    func otherProcess() throws -> ModelContainer { try store.otherProcess() }
}
