import Foundation
@_spi(PGModelInternals) import PGModel
import Testing
import PGModelTesting

/// Relationship and inheritance predicates: PostgreSQL must select exactly the rows that
/// `Predicate.evaluate` selects in Swift over the same graph.
@Suite("Predicate parity: relationships and inheritance")
struct GraphPredicateParityTests {
    typealias Track = MusicLibrary.Track
    typealias Album = MusicLibrary.Album
    typealias Trip = SampleTrips.Trip
    typealias PersonalTrip = SampleTrips.PersonalTrip
    typealias BusinessTrip = SampleTrips.BusinessTrip

    struct TrackCase: CustomTestStringConvertible, @unchecked Sendable {
        let name: String
        let predicate: Predicate<Track>
        var testDescription: String { name }
    }

    struct AlbumCase: @unchecked Sendable {
        let name: String
        let predicate: Predicate<Album>
    }

    struct TripCase: @unchecked Sendable {
        let name: String
        let predicate: Predicate<Trip>
    }

    static let trackCases: [TrackCase] = {
        let blue = "Blue"
        return [
            TrackCase(name: "album?.title ==", predicate: #Predicate { $0.album?.title == blue }),
            TrackCase(name: "album?.title !=", predicate: #Predicate { $0.album?.title != blue }),
            TrackCase(name: "album == nil", predicate: #Predicate { $0.album == nil }),
            TrackCase(name: "album != nil", predicate: #Predicate { $0.album != nil }),
            TrackCase(name: "album?.year ?? 0 >", predicate: #Predicate { ($0.album?.year ?? 0) > 1990 }),
            TrackCase(name: "if let album", predicate: #Predicate {
                if let album = $0.album { album.year < 2000 } else { false }
            }),
            TrackCase(name: "album?.tracks.count", predicate: #Predicate { ($0.album?.tracks.count ?? 0) >= 3 }),
        ]
    }()

    static let albumCases: [AlbumCase] = [
        AlbumCase(name: "tracks.count >", predicate: #Predicate { $0.tracks.count > 2 }),
        AlbumCase(name: "tracks.isEmpty", predicate: #Predicate { $0.tracks.isEmpty }),
        AlbumCase(name: "!tracks.isEmpty", predicate: #Predicate { !$0.tracks.isEmpty }),
        AlbumCase(name: "contains(where:)", predicate: #Predicate { $0.tracks.contains { $0.duration > 200 } }),
        AlbumCase(name: "allSatisfy", predicate: #Predicate { $0.tracks.allSatisfy { $0.duration > 100 } }),
        AlbumCase(name: "filter.count", predicate: #Predicate { $0.tracks.filter { $0.genre == "Rock" }.count >= 2 }),
    ]

    static let tripCases: [TripCase] = {
        let reason = PersonalTrip.Reason.family
        return [
            TripCase(name: "is PersonalTrip", predicate: #Predicate { $0 is PersonalTrip }),
            TripCase(name: "is BusinessTrip", predicate: #Predicate { $0 is BusinessTrip }),
            TripCase(name: "!(is PersonalTrip)", predicate: #Predicate { !($0 is PersonalTrip) }),
            TripCase(name: "as? PersonalTrip reason", predicate: #Predicate {
                if let p = $0 as? PersonalTrip { p.reason == reason } else { false }
            }),
            TripCase(name: "livingAccommodation?.placeName", predicate: #Predicate { $0.livingAccommodation?.placeName == "Grand" }),
            TripCase(name: "bucketList.contains(where:)", predicate: #Predicate { $0.bucketList.contains { $0.hasReservation } }),
        ]
    }()

    @Test(arguments: StoreKind.tested)
    func trackAndAlbumPredicatesSelectTheSameRows(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, MusicLibrary.models, service: kind == .service ? try await TestService.seeds() : nil)
        try await offCooperativePool {
            let writer = f.newContext()
            let titles = ["Blue", "Red", "Green", "Empty"]
            for (a, title) in titles.enumerated() {
                let album = Album(id: "\(f.token)-a\(a)", title: title, year: 1980 + a * 10)
                for t in 0..<(3 - a % 4) {
                    album.tracks.append(Track(id: "\(f.token)-a\(a)-t\(t)", title: "T\(a)\(t)", duration: Double(90 + 60 * t),
                                              genre: t % 2 == 0 ? "Rock" : nil))
                }
                writer.insert(album)
            }
            writer.insert(Track(id: "\(f.token)-single", title: "Single", duration: 250))
            try writer.save()

            let reader = f.newContext()
            let tracks = try reader.fetch(FetchDescriptor<Track>())
            for c in Self.trackCases {
                let expected = Set(try tracks.filter { try c.predicate.evaluate($0) }.map(\.id))
                let actual = try reader.fetch(FetchDescriptor<Track>(predicate: c.predicate)).map(\.id)
                #expect(Set(actual) == expected, "\(c.name)")
                #expect(actual.count == expected.count, "\(c.name): no duplicates")
            }
            let albums = try reader.fetch(FetchDescriptor<Album>())
            for c in Self.albumCases {
                let expected = Set(try albums.filter { try c.predicate.evaluate($0) }.map(\.id))
                let actual = try reader.fetch(FetchDescriptor<Album>(predicate: c.predicate)).map(\.id)
                #expect(Set(actual) == expected, "\(c.name)")
                #expect(actual.count == expected.count, "\(c.name): no duplicates")
            }
            // Sorting by a to-one relationship's attribute; tracks without an album sort first.
            let sorted = try reader.fetch(FetchDescriptor<Track>(sortBy: [SortDescriptor(\Track.album?.title), SortDescriptor(\.title)]))
            let expectedOrder = tracks.sorted { ($0.album?.title ?? "", $0.title) < ($1.album?.title ?? "", $1.title) }.map(\.id)
            #expect(sorted.map(\.id) == expectedOrder)
        }
    }

    @Test(arguments: StoreKind.tested)
    func inheritancePredicatesSelectTheSameRows(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, SampleTrips.models, service: kind == .service ? try await TestService.seeds() : nil)
        try await offCooperativePool {
            let base = Date(timeIntervalSince1970: 1_750_000_000)
            let writer = f.newContext()
            let plain = Trip(name: "\(f.token)-1", destination: "A", startDate: base, endDate: base)
            plain.livingAccommodation = SampleTrips.LivingAccommodation(address: "x", placeName: "Grand")
            let item = SampleTrips.BucketListItem(title: "Dinner", hasReservation: true)
            plain.bucketList.append(item)
            writer.insert(plain)
            writer.insert(BusinessTrip(name: "\(f.token)-2", destination: "B", startDate: base, endDate: base, perdiem: 50))
            writer.insert(PersonalTrip(name: "\(f.token)-3", destination: "C", startDate: base, endDate: base, reason: .family))
            writer.insert(PersonalTrip(name: "\(f.token)-4", destination: "D", startDate: base, endDate: base, reason: .wellness))
            writer.insert(SampleTrips.RetreatTrip(name: "\(f.token)-5", destination: "E", startDate: base, endDate: base, retreatCenter: "c"))
            try writer.save()

            let reader = f.newContext()
            let trips = try reader.fetch(FetchDescriptor<Trip>())
            #expect(trips.count == 5)
            for c in Self.tripCases {
                let expected = Set(try trips.filter { try c.predicate.evaluate($0) }.map(\.name))
                let actual = try reader.fetch(FetchDescriptor<Trip>(predicate: c.predicate)).map(\.name)
                #expect(Set(actual) == expected, "\(c.name)")
            }
        }
    }
}
