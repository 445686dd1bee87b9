import Foundation
import PGModel

// The models of "SwiftData: Dive into inheritance and schema migration" (WWDC25), with only the import
// changed and the initializers the session elides written out.

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

// As in the session: no initializer of its own, so it inherits Trip's.
@Model
class BusinessTrip: Trip {
    var perdiem: Double = 0.0
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
