// Models shared by the snippets, as the seed sessions declare them.
import Foundation
import PGModel

@Model
final class SnippetTrip {
    var name: String
    var destination: String
    var startDate: Date
    var endDate: Date
    @Relationship(deleteRule: .cascade, inverse: \SnippetAccommodation.trip)
    var accommodation: SnippetAccommodation?

    init(name: String, destination: String, startDate: Date = .now, endDate: Date = .now) {
        self.name = name
        self.destination = destination
        self.startDate = startDate
        self.endDate = endDate
    }
}

@Model
final class SnippetAccommodation {
    var name: String
    var trip: SnippetTrip?

    init(name: String) {
        self.name = name
    }
}
