import Foundation
@_spi(PGModelInternals) import PGModelCore
import Testing

@_spi(PGModelInternals) @testable import PGModel
import PGModelTesting

/// `fetch(_:batchSize:)` while another client deletes rows: every position keeps the model of the
/// identifier fetched for it (a deleted row's is a stand-in with empty values and `lastError` says
/// `not_found`), never the next row's model and never a trap at the end of a batch.
@Suite("Batched fetch while rows are deleted")
struct BatchedFetchTests {
    typealias Track = MusicLibrary.Track
    typealias Trip = SampleTrips.Trip
    typealias PersonalTrip = SampleTrips.PersonalTrip

    @Test(arguments: StoreKind.tested)
    func deletedRowsKeepTheirPositions(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, MusicLibrary.models, service: kind == .service ? try await TestService.seeds() : nil)
        try await offCooperativePool {
            let writer = f.newContext()
            for i in 0..<10 { writer.insert(Track(id: "\(f.token)-\(i)", title: String(format: "T%02d", i))) }
            try writer.save()
            let reader = f.newContext()
            let tracks = try reader.fetch(FetchDescriptor<Track>(sortBy: [SortDescriptor(\.title)]), batchSize: 4)
            let fetched = try reader.fetchIdentifiers(FetchDescriptor<Track>(sortBy: [SortDescriptor(\.title)]))
            #expect(tracks.count == 10)
            #expect(tracks.lastError == nil)

            // Another context deletes a row inside the second batch and the collection's last row, before
            // either batch is read.
            let other = f.newContext()
            for track in try other.fetch(FetchDescriptor<Track>(predicate: #Predicate { $0.title == "T05" || $0.title == "T09" })) {
                other.delete(track)
            }
            try other.save()

            let titles = (0..<tracks.count).map { tracks[$0].title }
            #expect(titles == ["T00", "T01", "T02", "T03", "T04", "", "T06", "T07", "T08", ""],
                    "a deleted row's position holds its stand-in, not the next row's model")
            #expect((0..<tracks.count).map { tracks[$0].persistentModelID } == fetched)
            #expect(tracks.lastError?.code == .notFound)
            #expect(tracks[5] === tracks[5], "a position reads the same object twice")
            #expect(Array(tracks).count == 10)
        }
    }

    @Test(arguments: StoreKind.tested)
    func aClassThatCannotStandInIsFetchedWhole(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, SampleTrips.models, service: kind == .service ? try await TestService.seeds() : nil)
        try await offCooperativePool {
            let writer = f.newContext()
            let start = Date(timeIntervalSince1970: 1_700_000_000)
            for i in 0..<5 {
                writer.insert(PersonalTrip(name: "\(f.token)-\(i)", destination: "D\(i)", startDate: start, endDate: start, reason: .family))
            }
            try writer.save()
            let reader = f.newContext()
            // PersonalTrip's `reason` has no empty value: no stand-in exists for a gone row of the hierarchy.
            let trips = try reader.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]), batchSize: 2)
            let other = f.newContext()
            for trip in try other.fetch(FetchDescriptor<Trip>()) where trip.name.hasSuffix("-3") { other.delete(trip) }
            try other.save()
            #expect((0..<trips.count).map { trips[$0].name } == (0..<5).map { "\(f.token)-\($0)" },
                    "fetched whole when the collection was made: the deleted row's model is the one read then")
            #expect(trips.lastError == nil)
        }
    }
}
