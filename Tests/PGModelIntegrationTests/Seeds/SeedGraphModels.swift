import Foundation
@_spi(PGModelInternals) import PGModel

// The seed documents' models with only the import changed (plus initializers where the seed elides
// them with "…"). Nested in a namespace because the README tour has a `Trip` of its own; entity names
// are the class names, so these run against a service of their own (`TestService.seeds()`).

/// SampleTrips ("SwiftData: Dive into inheritance and schema migration").
enum SampleTrips {
    @Model
    class Trip {
        var name: String
        var destination: String
        var startDate: Date
        var endDate: Date

        var bucketList: [BucketListItem] = [BucketListItem]()
        var livingAccommodation: LivingAccommodation?

        init(name: String, destination: String, startDate: Date, endDate: Date) {
            self.name = name
            self.destination = destination
            self.startDate = startDate
            self.endDate = endDate
        }
    }

    @Model
    class BusinessTrip: Trip {
        var perdiem: Double = 0.0

        init(name: String, destination: String, startDate: Date, endDate: Date, perdiem: Double) {
            self.perdiem = perdiem
            super.init(name: name, destination: destination, startDate: startDate, endDate: endDate)
        }
    }

    @Model
    class PersonalTrip: Trip {
        enum Reason: String, CaseIterable, Codable {
            case family
            case reunion
            case wellness
        }

        var reason: Reason

        init(name: String, destination: String, startDate: Date, endDate: Date, reason: Reason) {
            self.reason = reason
            super.init(name: name, destination: destination, startDate: startDate, endDate: endDate)
        }
    }

    /// A third level: a personal trip that is also a retreat.
    @Model
    class RetreatTrip: PersonalTrip {
        var retreatCenter: String = ""

        init(name: String, destination: String, startDate: Date, endDate: Date, retreatCenter: String) {
            self.retreatCenter = retreatCenter
            super.init(name: name, destination: destination, startDate: startDate, endDate: endDate, reason: .wellness)
        }
    }

    @Model
    class BucketListItem {
        var title: String
        var details: String
        var hasReservation: Bool
        var isInPlan: Bool
        var trip: Trip?

        init(title: String, details: String = "", hasReservation: Bool = false, isInPlan: Bool = false) {
            self.title = title
            self.details = details
            self.hasReservation = hasReservation
            self.isInPlan = isInPlan
        }
    }

    @Model
    class LivingAccommodation {
        var address: String
        var placeName: String
        var trip: Trip?

        init(address: String, placeName: String) {
            self.address = address
            self.placeName = placeName
        }
    }

    /// The axiom reference's polymorphic relationship: trips of any class.
    @Model
    class TravelPlanner {
        var name: String
        @Relationship(deleteRule: .cascade) var upcomingTrips: [Trip] = [] // Can contain BusinessTrip and PersonalTrip

        init(name: String) { self.name = name }
    }

    static var models: [any PersistentModel.Type] { [
        Trip.self, BusinessTrip.self, PersonalTrip.self, RetreatTrip.self, BucketListItem.self,
        LivingAccommodation.self, TravelPlanner.self,
    ] }
}

/// The SwiftData reference's Track, Album and User examples.
enum MusicLibrary {
    @Model final class Track {
        @Attribute(.unique) var id: String
        var title: String
        var duration: Double = 0
        var genre: String?
        @Relationship(deleteRule: .cascade, inverse: \Album.tracks) var album: Album?

        init(id: String, title: String, duration: Double = 0, genre: String? = nil, album: Album? = nil) {
            self.id = id
            self.title = title
            self.duration = duration
            self.genre = genre
            self.album = album
        }
    }

    @Model final class Album {
        @Attribute(.unique) var id: String
        var title: String
        var year: Int = 2000
        @Relationship(deleteRule: .cascade) var tracks: [Track] = []

        init(id: String, title: String, year: Int = 2000) {
            self.id = id
            self.title = title
            self.year = year
        }
    }

    @Model final class User {
        @Attribute(.unique) var id: String
        var name: String

        // Users following this user (inverse relationship)
        @Relationship(deleteRule: .nullify, inverse: \User.following) var followers: [User] = []

        // Users this user is following
        @Relationship(deleteRule: .nullify) var following: [User] = []

        init(id: String, name: String) {
            self.id = id
            self.name = name
        }
    }

    /// A label that refuses to be deleted while it still has artists (`.deny`), and holds at most
    /// three of them.
    @Model final class Label {
        var name: String
        @Relationship(deleteRule: .deny, maximumModelCount: 3) var artists: [Artist] = []
        init(name: String) { self.name = name }
    }

    @Model final class Artist {
        var name: String
        var label: Label?
        init(name: String) { self.name = name }
    }

    /// A band has at least one member (`minimumModelCount`).
    @Model final class Band {
        var name: String
        @Relationship(deleteRule: .nullify, minimumModelCount: 1) var members: [Artist] = []
        init(name: String) { self.name = name }
    }

    static var models: [any PersistentModel.Type] { [Track.self, Album.self, User.self, Label.self, Artist.self, Band.self] }
}
