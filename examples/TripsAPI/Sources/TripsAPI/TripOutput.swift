import Foundation
import Hummingbird

/// A trip as the API answers it: its fields and its id, the row's primary key (a UUID), which
/// `GET`, `PATCH` and `DELETE /trips/{id}` take.
///
/// ```json
/// {"id": "0193…", "name": "Spring in Paris", "destination": "Paris",
///  "startDate": "2027-04-01T00:00:00Z", "endDate": "2027-04-08T00:00:00Z", "budget": 1200}
/// ```
public struct TripOutput: ResponseCodable, Sendable, Equatable {
    /// The trip's id.
    public var id: String
    /// Its unique name.
    public var name: String
    /// Where it goes.
    public var destination: String
    /// The first day.
    public var startDate: Date
    /// The last day.
    public var endDate: Date
    /// What it may cost.
    public var budget: Double

    /// The answer for `trip`, read while its context is alive (models do not leave their request).
    ///
    /// ```swift
    /// let output = TripOutput(trip)
    /// ```
    public init(_ trip: Trip) {
        id = trip.persistentModelID.id.description
        name = trip.name
        destination = trip.destination
        startDate = trip.startDate
        endDate = trip.endDate
        budget = trip.budget
    }
}
