import Hummingbird

/// The answer of `GET /trips`: an object rather than a bare array, so fields (a next page, say) can be
/// added later without breaking clients.
///
/// ```json
/// {"trips": [{"id": "0193…", "name": "Spring in Paris", …}]}
/// ```
public struct TripList: ResponseCodable, Sendable, Equatable {
    /// The trips, by start date, then name.
    public var trips: [TripOutput]

    /// A list of `trips`.
    ///
    /// ```swift
    /// let list = TripList(trips: trips.map(TripOutput.init))
    /// ```
    public init(trips: [TripOutput]) {
        self.trips = trips
    }
}
