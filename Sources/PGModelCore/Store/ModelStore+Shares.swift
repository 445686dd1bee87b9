import Foundation

@_spi(PGModelInternals) extension ModelStore {
    /// The shares of `record` the caller may see, without its owner (``sharing(of:)``).
    ///
    /// ```swift
    /// let users = try await store.shares(of: RowReference(entity: "Trip", id: tripID)).map(\.user)
    /// ```
    public func shares(of record: RowReference) async throws -> [ModelShare] {
        try await sharing(of: record).shares
    }
}
