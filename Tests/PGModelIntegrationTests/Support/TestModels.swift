import Foundation
@_spi(PGModelInternals) import PGModel

// Models of the behaviour suite. Names are distinct from other test targets' models; every test runs in
// its own PostgreSQL schema, so tests can run in parallel and repeatedly.

enum TripKind: String, Codable, CaseIterable { case business, vacation, family }
enum Stars: Int, Codable { case one = 1, two, three }

@Model final class Voyage {
    @Attribute(.unique) var name: String
    var destination: String
    var startDate: Date
    var endDate: Date
    var budget: Double
    var travelers: Int
    var kind: TripKind
    var notes: String?
    var isFavorite: Bool = false
    @Transient var viewCount: Int = 0

    init(name: String, destination: String, startDate: Date, endDate: Date, budget: Double = 1000,
         travelers: Int = 1, kind: TripKind = .vacation, notes: String? = nil) {
        self.name = name
        self.destination = destination
        self.startDate = startDate
        self.endDate = endDate
        self.budget = budget
        self.travelers = travelers
        self.kind = kind
        self.notes = notes
    }
}

@Model final class Booking {
    var hotel: String
    var room: Int
    var night: Date
    var guest: String?
    #Unique<Booking>([\.hotel, \.room, \.night])
    #Index<Booking>([\.hotel], [\.hotel, \.night])

    init(hotel: String, room: Int, night: Date, guest: String? = nil) {
        self.hotel = hotel
        self.room = room
        self.night = night
        self.guest = guest
    }
}

@Model final class EveryType {
    var string: String
    var bool: Bool
    var int: Int
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var double: Double
    var float: Float
    var decimal: Decimal
    var date: Date
    var uuid: UUID
    var data: Data
    var url: URL
    var kind: TripKind
    var stars: Stars
    var optionalString: String?
    var optionalInt: Int?
    var optionalDecimal: Decimal?
    var optionalDate: Date?
    var optionalUUID: UUID?
    var optionalData: Data?
    var optionalURL: URL?
    var optionalKind: TripKind?
    var optionalStars: Stars?

    init(seed: Int) {
        string = "s\(seed) ünïcødé ' \" \\ %_"
        bool = seed % 2 == 0
        int = Int.max - seed
        int8 = Int8.min
        int16 = Int16.max
        int32 = Int32.min + Int32(seed)
        int64 = Int64.min + Int64(seed)
        uint8 = UInt8.max
        uint16 = UInt16.max
        uint32 = UInt32.max
        double = 3.141592653589793 * Double(seed)
        float = 2.5
        decimal = Decimal(string: "12345678901234567890.123456789")!
        date = Date(timeIntervalSince1970: 1_700_000_000 + Double(seed))
        uuid = UUID()
        data = Data([0, 1, 2, 255, UInt8(seed % 256)])
        url = URL(string: "https://example.com/path?q=\(seed)")!
        kind = .family
        stars = .three
        optionalString = seed % 2 == 0 ? "present" : nil
        optionalInt = seed % 2 == 0 ? -seed : nil
        optionalDecimal = seed % 2 == 0 ? Decimal(seed) / 8 : nil
        optionalDate = seed % 2 == 0 ? Date(timeIntervalSince1970: 86_400) : nil
        optionalUUID = seed % 2 == 0 ? UUID() : nil
        optionalData = seed % 2 == 0 ? Data() : nil
        optionalURL = seed % 2 == 0 ? URL(string: "file:///tmp/x")! : nil
        optionalKind = seed % 2 == 0 ? .business : nil
        optionalStars = seed % 2 == 0 ? .one : nil
    }
}
