import Foundation
import PGModel

/// A trip, as the API stores it: one row of the `trip` table in the API's PostgreSQL schema
/// (`trips_api` unless the store's URL names another).
///
/// ```swift
/// let trip = Trip(name: "Spring in Paris", destination: "Paris", startDate: .now, endDate: .now, budget: 1200)
/// modelContext.insert(trip)
/// ```
@Model public final class Trip {
    /// The trip's name, unique: a second trip of the same name is `unique_violation`, which the API
    /// answers with 409.
    @Attribute(.unique) public var name: String
    /// Where the trip goes; `GET /trips?destination=…` filters on it.
    public var destination: String
    /// The first day.
    public var startDate: Date
    /// The last day, never before ``startDate``.
    public var endDate: Date
    /// What the trip may cost, zero or more. Its default (0) is what trips stored before budgets existed
    /// get when `TripsAPIMigrationPlan` adds the column.
    public var budget: Double = 0

    /// A trip with these values.
    ///
    /// ```swift
    /// let trip = Trip(name: "Oslo", destination: "Oslo", startDate: .now, endDate: .now, budget: 700)
    /// ```
    public init(name: String, destination: String, startDate: Date, endDate: Date, budget: Double) {
        self.name = name
        self.destination = destination
        self.startDate = startDate
        self.endDate = endDate
        self.budget = budget
    }
}

extension Trip {
    /// The entity name a trip's `PersistentIdentifier` carries, for identifiers made from a URL's id.
    static var entityName: String { "Trip" }
}
