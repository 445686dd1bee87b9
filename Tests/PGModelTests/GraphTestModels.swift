import Foundation
@_spi(PGModelInternals) import PGModel

// Model graphs for translator tests: to-one and to-many relationships with inverses, a self-referencing
// many-to-many, and a class hierarchy with subclass-only attributes.

@Model final class Album {
    var title: String
    var year: Int?
    @Relationship(deleteRule: .cascade, inverse: \Track.album) var tracks: [Track] = []
    init(title: String, year: Int? = nil) {
        self.title = title
        self.year = year
    }
}

@Model final class Track {
    var title: String
    var duration: Double
    var album: Album?
    init(title: String, duration: Double) {
        self.title = title
        self.duration = duration
    }
}

@Model final class User {
    var name: String
    @Relationship(deleteRule: .nullify, inverse: \User.following) var followers: [User] = []
    var following: [User] = []
    init(name: String) { self.name = name }
}

@Model final class LivingAccommodation {
    var name: String
    var address: String
    init(name: String, address: String) {
        self.name = name
        self.address = address
    }
}

@Model class Trip {
    var name: String
    var startDate: Date
    @Relationship(deleteRule: .cascade) var livingAccommodation: LivingAccommodation?
    init(name: String, startDate: Date) {
        self.name = name
        self.startDate = startDate
    }
}

@Model class BusinessTrip: Trip {
    var perdiem: Double = 0.0
    init(name: String, startDate: Date, perdiem: Double) {
        self.perdiem = perdiem
        super.init(name: name, startDate: startDate)
    }
}

@Model class PersonalTrip: Trip {
    enum Reason: String, Codable {
        case family, reunion, wellness, unknown
    }

    var reason: Reason
    init(name: String, startDate: Date, reason: Reason) {
        self.reason = reason
        super.init(name: name, startDate: startDate)
    }
}

/// A track's trip: to-one chains of two steps (`$0.trip?.livingAccommodation?.name`).
@Model final class Stay {
    var nights: Int
    var trip: Trip?
    init(nights: Int) { self.nights = nights }
}
