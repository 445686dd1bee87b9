import Foundation
import PGModelCore

extension ModelContainer {
    /// Deletes every row of every model in the container's schema, in one transaction, as SwiftData's
    /// `deleteAllData()` does. The deletes are recorded in history (observers see them) and follow the
    /// delete rules; through the service a user deletes only the rows they may delete. The tables stay.
    ///
    /// A `.deny` relationship whose rows are deleted too does not refuse: everything goes. The
    /// container's contexts keep their registered models; fetch again after this call.
    ///
    /// ```swift
    /// try container.deleteAllData()
    /// ```
    public func deleteAllData() throws {
        let roots = schema.entities.filter { $0.superentityName == nil }.map(\.name)
        // Entities that `.deny` others are deleted last: by then what they protect is gone.
        let denying = Set(schema.entities.filter { entity in entity.entityDescription.relationships.contains { $0.deleteRule == .deny } }.map(\.name))
        let ordered = roots.filter { !denying.contains($0) } + roots.filter { denying.contains($0) }
        let request = SaveRequest(batchDeletes: ordered.map { FetchRequest(entity: $0) })
        guard !request.isEmpty else { return }
        guard allowsSave else {
            throw PGModelError(.saveNotAllowed, "this ModelContainer's configuration has allowsSave: false")
        }
        let store = store
        _ = try bridge.run { try await store.save(request) }
    }
}
