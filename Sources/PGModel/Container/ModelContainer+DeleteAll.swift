import Foundation
@_spi(PGModelInternals) import PGModelCore

extension ModelContainer {
    /// Deletes every row of every model in the container's schema, in one transaction, as SwiftData's
    /// `deleteAllData()` does, with its signature: it does not throw. Where SwiftData would fail silently,
    /// the failure is kept in ``lastDeleteAllDataError`` (and logged); ``erase()`` is the same work, throwing.
    ///
    /// The deletes are recorded in history (observers see them) and follow the delete rules; through the
    /// service a user deletes only the rows they may delete. The tables stay. A `.deny` relationship whose
    /// rows are deleted too does not refuse: everything goes. The container's contexts keep their
    /// registered models; fetch again after this call.
    ///
    /// ```swift
    /// container.deleteAllData()
    /// if let error = container.lastDeleteAllDataError { print(error.code) }
    /// ```
    public func deleteAllData() {
        do {
            try erase()
            deleteAllDataError.withLockedValue { $0 = nil }
        } catch {
            let failure = error as? PGModelError ?? PGModelError(.internalError, "deleteAllData failed: \(error)")
            deleteAllDataError.withLockedValue { $0 = failure }
        }
    }

    /// Why the last ``deleteAllData()`` deleted nothing, or `nil` when it succeeded (or never ran).
    public var lastDeleteAllDataError: PGModelError? { deleteAllDataError.withLockedValue { $0 } }

    /// Deletes every row of every model in the container's schema in one transaction, and throws a
    /// typed error (`save_not_allowed`, `forbidden`, `timeout`, …) if it cannot: SwiftData's `erase()`.
    /// The tables stay, since other processes and users share them; see ``deleteAllData()``.
    ///
    /// ```swift
    /// try container.erase()
    /// ```
    public func erase() throws {
        guard let request = try eraseRequest() else { return }
        let store = store
        _ = try bridge.run { try await store.save(request) }
    }

    /// ``erase()``, suspending instead of blocking a thread for the round trip: the same deletes,
    /// in one transaction, with the same errors.
    ///
    /// ```swift
    /// try await container.eraseAsync()
    /// ```
    public func eraseAsync() async throws {
        guard let request = try eraseRequest() else { return }
        _ = try await store.save(request)
    }

    /// The save that deletes every row of the schema's models; nil when the schema has none.
    private func eraseRequest() throws -> SaveRequest? {
        let roots = schema.entities.filter { $0.superentityName == nil }.map(\.name)
        // Entities that `.deny` others are deleted last: by then what they protect is gone.
        let denying = Set(schema.entities.filter { entity in entity.entityDescription.relationships.contains { $0.deleteRule == .deny } }.map(\.name))
        let ordered = roots.filter { !denying.contains($0) } + roots.filter { denying.contains($0) }
        let request = SaveRequest(batchDeletes: ordered.map { FetchRequest(entity: $0) })
        guard !request.isEmpty else { return nil }
        guard allowsSave else {
            throw PGModelError(.saveNotAllowed, "this ModelContainer's configuration has allowsSave: false")
        }
        return request
    }
}
