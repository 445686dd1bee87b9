@_spi(PGModelInternals) import PGModelCore

extension ModelContainer {
    /// Runs `body` with a fresh ``ModelContext`` of its own — one unit of work, such as one HTTP
    /// request — then saves what it changed; if `body` or the save throws, rolls every unsaved change
    /// back and rethrows, so nothing of a failed request is written and nothing of it outlives the call.
    ///
    /// The context is made for this call alone: autosave is off (the one save happens at the end, with
    /// ``ModelContext/saveAsync()``, which suspends rather than blocks), and no other request ever sees
    /// its unsaved changes or its models. It is not Sendable and `body` cannot let it escape, so it stays
    /// on the calling task; share the container and `PersistentIdentifier`s, never the context. `body`
    /// runs on the caller's actor (`nonisolated(nonsending)`), so its result need not be Sendable.
    ///
    /// ```swift
    /// router.post("trips") { request, context -> Response in
    ///     let input = try await request.decode(as: TripInput.self, context: context)
    ///     let output = try await container.withContext { modelContext in
    ///         let trip = Trip(name: input.name, destination: input.destination)
    ///         modelContext.insert(trip)
    ///         return TripOutput(trip)          // read before the save; saved when the closure returns
    ///     }
    ///     return try output.response(status: .created)
    /// }
    /// ```
    ///
    /// The save's errors are PGModel's typed errors: `save_conflict` when another request changed the
    /// same attribute since this one read it (with the default ``MergePolicy/error``),
    /// `unique_violation` for a taken unique value, and so on — map them to HTTP statuses in one place.
    ///
    /// - Parameters:
    ///   - author: Recorded with the save in persistent history (``ModelContext/author``), e.g. the
    ///     request's user or route.
    ///   - mergePolicy: What the save does when a model it changes was changed elsewhere since this
    ///     context read it (``ModelContext/mergePolicy``).
    ///   - body: The work; its context is valid only until it returns.
    public nonisolated(nonsending) func withContext<Result>(
        author: String? = nil,
        mergePolicy: MergePolicy = .error,
        _ body: nonisolated(nonsending) (ModelContext) async throws -> Result
    ) async throws -> Result {
        let context = ModelContext(self)
        context.autosaveEnabled = false
        context.author = author
        context.mergePolicy = mergePolicy
        do {
            let result = try await body(context)
            try await context.saveAsync()
            return result
        } catch {
            // The context dies with this call, but its models may not (a caller could keep one): rolling
            // back leaves them as the store has them, not with changes no save will ever write.
            context.rollback()
            throw error
        }
    }
}
