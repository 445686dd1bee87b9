import Foundation
@_spi(PGModelInternals) import PGModelCore

/// Async forms of the calls that reach the store, for server code.
///
/// SwiftData's `fetch` and `save` are synchronous: PGModel blocks the calling thread for the database
/// round trip. That is right for a command-line tool or a `@ModelActor`'s serial queue, and wrong in an
/// async request handler (Hummingbird, Vapor), where it parks one of the few cooperative threads — two on
/// a two-core machine — for the whole round trip. The `…Async` forms suspend instead: the handler's
/// thread serves other requests meanwhile. They run on the caller's actor (`nonisolated(nonsending)`),
/// have the same semantics, deadlines and errors as their synchronous forms, and may be mixed with them.
///
/// ```swift
/// router.get("trips") { request, context -> [TripDTO] in
///     let modelContext = ModelContext(container)
///     let trips = try await modelContext.fetchAsync(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate)]))
///     return trips.map(TripDTO.init)
/// }
/// ```
///
/// Relationship faults still load synchronously when read (a property getter cannot suspend): in async
/// code, name the relationships you will read in `relationshipKeyPathsForPrefetching`.
///
/// While `saveAsync()` is suspended, code on the same actor may keep using the context: what it
/// changes in the meantime stays pending for the next save.
extension ModelContext {
    /// Suspends for one store round trip: ``roundTrip(_:)`` for async callers. No backstop timer as
    /// the bridge's: the stores bound every call themselves, and a suspended task holds no thread.
    nonisolated(nonsending) func roundTripAsync<R: Sendable>(_ body: @Sendable () async throws -> R) async throws -> R {
        storeRoundTrips += 1
        return try await body()
    }

    /// ``fetch(_:)``, suspending instead of blocking.
    ///
    /// ```swift
    /// let paris = try await context.fetchAsync(FetchDescriptor<Trip>(predicate: #Predicate { $0.destination == "Paris" }))
    /// ```
    public nonisolated(nonsending) func fetchAsync<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) async throws -> [T] {
        let (_, request, pending) = try prepare(descriptor)
        return try await fetchModelsAsync(descriptor, request: request, pending: pending).models
    }

    /// ``fetchCount(_:)``, suspending instead of blocking.
    ///
    /// ```swift
    /// let count = try await context.fetchCountAsync(FetchDescriptor<Trip>())
    /// ```
    public nonisolated(nonsending) func fetchCountAsync<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) async throws -> Int {
        let (_, request, pending) = try prepare(descriptor)
        if pending { return try await fetchAsync(descriptor).count }
        let store = container.store
        return try await roundTripAsync { try await store.count(request) }
    }

    /// ``fetchIdentifiers(_:)``, suspending instead of blocking.
    ///
    /// ```swift
    /// let ids = try await context.fetchIdentifiersAsync(FetchDescriptor<Trip>())
    /// ```
    public nonisolated(nonsending) func fetchIdentifiersAsync<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) async throws -> [PersistentIdentifier] {
        let (_, request, pending) = try prepare(descriptor)
        if pending { return try await fetchAsync(descriptor).map(\.persistentModelID) }
        let store = container.store
        let references = try await roundTripAsync { try await store.fetchIdentifiers(request) }
        let storeIdentifier = container.storeIdentifier
        return references.map { PersistentIdentifier(entityName: $0.entity, id: $0.id, storeIdentifier: storeIdentifier, isTemporary: false) }
    }

    /// ``model(for:)``, suspending instead of blocking.
    ///
    /// ```swift
    /// let trip = try await context.modelAsync(for: id) as? Trip
    /// ```
    public nonisolated(nonsending) func modelAsync(for persistentModelID: PersistentIdentifier) async throws -> any PersistentModel {
        if let model = registered(persistentModelID.uuid) { return model }
        guard let entity = container.schema.entity(named: persistentModelID.entityName) else {
            throw PGModelError(.unknownEntity, "\(persistentModelID.entityName) is not in this container's schema", model: persistentModelID.entityName)
        }
        let rows = try await fetchRowsAsync(FetchRequest(entity: entity.name, identifiers: [persistentModelID.uuid]))
        return try modelFromIdentifierFetch(rows, persistentModelID)
    }

    /// ``save()``, suspending instead of blocking.
    ///
    /// ```swift
    /// context.insert(Trip(name: "Lisbon", destination: "Lisbon", startDate: .now, endDate: .now))
    /// try await context.saveAsync()
    /// ```
    public nonisolated(nonsending) func saveAsync() async throws {
        guard let prepared = try prepareSave() else { return }
        let store = container.store
        let request = prepared.request
        let result = try await roundTripAsync { try await store.save(request) }
        finishSave(prepared, result: result)
        postDidSave(prepared, result: result)
    }

    /// ``fetchHistory(_:)``, suspending instead of blocking.
    ///
    /// ```swift
    /// let transactions = try await context.fetchHistoryAsync(HistoryDescriptor<DefaultHistoryTransaction>())
    /// ```
    public nonisolated(nonsending) func fetchHistoryAsync<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) async throws -> [T] {
        let request = try Self.historyRequest(descriptor)
        let store = container.store
        let page = try await roundTripAsync { try await store.fetchHistory(request) }
        let schema = container.schema
        return try DefaultHistoryTransaction.transactions(page.transactions, as: T.self, schema: schema)
    }

    /// ``deleteHistory(_:)``, suspending instead of blocking.
    ///
    /// ```swift
    /// try await context.deleteHistoryAsync(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token <= processed }))
    /// ```
    public nonisolated(nonsending) func deleteHistoryAsync<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) async throws {
        let request = try Self.deleteHistoryRequest(descriptor)
        let store = container.store
        _ = try await roundTripAsync { try await store.deleteHistory(request) }
    }

    /// ``fetchRows(_:)``, suspending: the rows of `request` with their models' required partners staged.
    nonisolated(nonsending) func fetchRowsAsync(_ request: FetchRequest) async throws -> [StoreRow] {
        let store = container.store
        let rows = try StoreRow.rows(of: await roundTripAsync { try await store.fetchTable(request) })
        var frontier = rows
        while true {
            let requests = partnerRequests(for: frontier)
            if requests.isEmpty { break }
            frontier = []
            for partnerRequest in requests {
                let partners = try StoreRow.rows(of: await roundTripAsync { try await store.fetchTable(partnerRequest) })
                stage(partners)
                frontier += partners
            }
        }
        return rows
    }
}
