import Foundation
import Hummingbird
import PGModel

/// The `/trips` routes. Each request gets a `ModelContext` of its own through
/// `ModelContainer.withContext`, which saves what the request changed when it returns and rolls back
/// when it throws; the store is reached with the `…Async` calls, which suspend instead of blocking one
/// of the server's few threads.
///
/// | route | answer |
/// |---|---|
/// | `GET /trips?destination=…&search=…&limit=…&offset=…` | 200 `{"trips": [...]}`, by start date |
/// | `GET /trips/{id}` | 200 the trip, 404 |
/// | `POST /trips` | 201 the trip with `Location`, 409 for a taken name |
/// | `PATCH /trips/{id}` | 200 the trip, 404, 409 for a taken name or a conflicting change |
/// | `DELETE /trips/{id}` | 204, 404 |
///
/// A body or query the API cannot accept is 400 `invalid_input`, an id that is not a UUID 400
/// `invalid_id`; PGModel's own errors are mapped by ``PGModelErrorMiddleware``.
///
/// ```swift
/// let router = Router()
/// TripsController(container: container).addRoutes(to: router.group("trips"))
/// ```
public struct TripsController<Context: RequestContext>: Sendable {
    /// The container every request's context is made from.
    public let container: ModelContainer

    /// The most trips one `GET /trips` answers; `limit` may ask for fewer.
    public static var maximumPageSize: Int { 500 }

    /// Routes over `container`.
    ///
    /// ```swift
    /// let controller = TripsController<BasicRequestContext>(container: container)
    /// ```
    public init(container: ModelContainer) {
        self.container = container
    }

    /// Adds the routes to `group` (normally `router.group("trips")`).
    ///
    /// ```swift
    /// TripsController(container: container).addRoutes(to: router.group("trips"))
    /// ```
    public func addRoutes(to group: RouterGroup<Context>) {
        group
            .get(use: list)
            .get(":id", use: get)
            .post(use: create)
            .patch(":id", use: update)
            .delete(":id", use: delete)
    }

    /// `GET /trips`: the trips matching the query's `destination` (exact) and `search` (in the name,
    /// ignoring case and diacritics), by start date, then name.
    @Sendable func list(_ request: Request, context: Context) async throws -> TripList {
        let query = request.uri.queryParameters
        let destination = query.get("destination")
        let search = query.get("search")
        let limit = try Self.integer(query.get("limit"), name: "limit", in: 1...Self.maximumPageSize) ?? 100
        let offset = try Self.integer(query.get("offset"), name: "offset", in: 0...Int(Int32.max)) ?? 0
        let predicate: Predicate<Trip>?
        switch (destination, search) {
        case let (destination?, search?):
            predicate = #Predicate<Trip> { $0.destination == destination && $0.name.localizedStandardContains(search) }
        case let (destination?, nil):
            predicate = #Predicate<Trip> { $0.destination == destination }
        case let (nil, search?):
            predicate = #Predicate<Trip> { $0.name.localizedStandardContains(search) }
        case (nil, nil):
            predicate = nil
        }
        var descriptor = FetchDescriptor<Trip>(predicate: predicate, sortBy: [SortDescriptor(\.startDate), SortDescriptor(\.name)])
        descriptor.fetchLimit = limit
        descriptor.fetchOffset = offset
        return try await container.withContext { modelContext in
            TripList(trips: try await modelContext.fetchAsync(descriptor).map(TripOutput.init))
        }
    }

    /// `GET /trips/{id}`.
    @Sendable func get(_ request: Request, context: Context) async throws -> TripOutput {
        let id = try Self.tripID(context)
        return try await container.withContext { modelContext in
            TripOutput(try await Self.trip(id, in: modelContext))
        }
    }

    /// `POST /trips`: 201 with the new trip and its `Location`.
    @Sendable func create(_ request: Request, context: Context) async throws -> EditedResponse<TripOutput> {
        let input = try await JSONBody.decode(TripInput.self, from: request)
        try input.validate()
        let output = try await container.withContext(author: "TripsAPI") { modelContext in
            // SwiftData's `.unique` makes inserting a taken name an upsert of the existing trip; an API's
            // create must not overwrite, so a taken name is refused first. Two creates of one new name at
            // the same instant can still both pass this check, and the later then updates the earlier.
            let name = input.name
            if try await modelContext.fetchCountAsync(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == name })) > 0 {
                throw APIError(status: .conflict, code: "unique_violation", message: "a trip with that name already exists")
            }
            let trip = Trip(name: input.name, destination: input.destination, startDate: input.startDate,
                            endDate: input.endDate, budget: input.budget ?? 0)
            modelContext.insert(trip)
            // The id is final from the start (chosen by PGModel at creation), so the answer can be
            // built before the save that ends the closure.
            return TripOutput(trip)
        }
        var headers = HTTPFields()
        headers[.location] = "/trips/\(output.id)"
        return EditedResponse(status: .created, headers: headers, response: output)
    }

    /// `PATCH /trips/{id}`: changes the fields the body gives.
    @Sendable func update(_ request: Request, context: Context) async throws -> TripOutput {
        let id = try Self.tripID(context)
        let patch = try await JSONBody.decode(TripPatch.self, from: request)
        return try await container.withContext(author: "TripsAPI") { modelContext in
            let trip = try await Self.trip(id, in: modelContext)
            try patch.apply(to: trip)
            return TripOutput(trip)
        }
    }

    /// `DELETE /trips/{id}`: 204.
    @Sendable func delete(_ request: Request, context: Context) async throws -> Response {
        let id = try Self.tripID(context)
        try await container.withContext(author: "TripsAPI") { modelContext in
            modelContext.delete(try await Self.trip(id, in: modelContext))
        }
        return Response(status: .noContent)
    }

    // MARK: Input

    /// The `{id}` path parameter as a UUID, or 400 `invalid_id`.
    static func tripID(_ context: Context) throws -> UUID {
        guard let text = context.parameters.get("id"), let id = UUID(uuidString: text) else {
            throw APIError(status: .badRequest, code: "invalid_id", message: "a trip id is a UUID, e.g. 01936b8e-4f2a-7c3d-9e1f-2a3b4c5d6e7f")
        }
        return id
    }

    /// The trip with row id `id`, or `not_found` (404). `nonisolated(nonsending)`: the context stays on
    /// the caller's task, where `withContext` handed it over.
    nonisolated(nonsending) static func trip(_ id: UUID, in modelContext: ModelContext) async throws -> Trip {
        let model = try await modelContext.modelAsync(for: PersistentIdentifier(entityName: Trip.entityName, id: id))
        guard let trip = model as? Trip else {
            throw PGModelError(.notFound, "no Trip with id \(id.uuidString.lowercased()) exists", model: Trip.entityName)
        }
        return trip
    }

    /// A query parameter as an integer in `range`, nil when absent, 400 when anything else.
    static func integer(_ text: String?, name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw APIError.invalidInput("\(name) must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }
}
