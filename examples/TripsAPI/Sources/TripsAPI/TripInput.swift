import Foundation

/// The body of `POST /trips`: every field of a new trip.
///
/// ```json
/// {"name": "Spring in Paris", "destination": "Paris",
///  "startDate": "2027-04-01T00:00:00Z", "endDate": "2027-04-08T00:00:00Z", "budget": 1200}
/// ```
public struct TripInput: Codable, Sendable {
    /// The trip's unique name; not empty.
    public var name: String
    /// Where it goes; not empty.
    public var destination: String
    /// The first day (ISO 8601).
    public var startDate: Date
    /// The last day (ISO 8601), not before `startDate`.
    public var endDate: Date
    /// Zero or more; 0 when left out.
    public var budget: Double?

    /// A new trip's fields.
    ///
    /// ```swift
    /// let input = TripInput(name: "Oslo", destination: "Oslo", startDate: .now, endDate: .now, budget: 700)
    /// ```
    public init(name: String, destination: String, startDate: Date, endDate: Date, budget: Double? = nil) {
        self.name = name
        self.destination = destination
        self.startDate = startDate
        self.endDate = endDate
        self.budget = budget
    }

    /// Throws `invalid_input` (400) naming the first field that is not acceptable.
    ///
    /// ```swift
    /// try input.validate()
    /// ```
    public func validate() throws {
        try TripRules.check(name: name, destination: destination, startDate: startDate, endDate: endDate, budget: budget ?? 0)
    }
}
