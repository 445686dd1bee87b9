import Foundation

/// The body of `PATCH /trips/{id}`: the fields to change; those left out keep their values.
///
/// ```json
/// {"budget": 1500}
/// ```
public struct TripPatch: Codable, Sendable {
    /// A new unique name; not empty.
    public var name: String?
    /// A new destination; not empty.
    public var destination: String?
    /// A new first day.
    public var startDate: Date?
    /// A new last day, not before the first.
    public var endDate: Date?
    /// A new budget, zero or more.
    public var budget: Double?

    /// A change of the fields given.
    ///
    /// ```swift
    /// let patch = TripPatch(budget: 1500)
    /// ```
    public init(name: String? = nil, destination: String? = nil, startDate: Date? = nil, endDate: Date? = nil, budget: Double? = nil) {
        self.name = name
        self.destination = destination
        self.startDate = startDate
        self.endDate = endDate
        self.budget = budget
    }

    /// Applies the fields given to `trip`, after checking the trip they would make: `invalid_input`
    /// (400) leaves `trip` unchanged.
    ///
    /// ```swift
    /// try patch.apply(to: trip)
    /// ```
    public func apply(to trip: Trip) throws {
        let name = name ?? trip.name
        let destination = destination ?? trip.destination
        let startDate = startDate ?? trip.startDate
        let endDate = endDate ?? trip.endDate
        let budget = budget ?? trip.budget
        try TripRules.check(name: name, destination: destination, startDate: startDate, endDate: endDate, budget: budget)
        // Only what changes is assigned, so a save writes (and conflict-checks) those attributes alone.
        if name != trip.name { trip.name = name }
        if destination != trip.destination { trip.destination = destination }
        if startDate != trip.startDate { trip.startDate = startDate }
        if endDate != trip.endDate { trip.endDate = endDate }
        if budget != trip.budget { trip.budget = budget }
    }
}
