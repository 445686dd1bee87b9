
@_spi(PGModelInternals) extension ModelStore {
    /// ``ModelStore/fetchTable(_:)`` for a store that only has ``ModelStore/fetch(_:)``: its rows,
    /// grouped by class and key set.
    ///
    /// ```swift
    /// let table = try await store.fetchTable(FetchRequest(entity: "Trip"))
    /// ```
    public func fetchTable(_ request: FetchRequest) async throws -> FetchedTable {
        FetchedTable(rows: try await fetch(request))
    }
}
