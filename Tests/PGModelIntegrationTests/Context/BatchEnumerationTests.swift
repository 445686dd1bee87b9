import Foundation
@_spi(PGModelInternals) import PGModelCore
import Testing

@_spi(PGModelInternals) @testable import PGModel
import PGModelTesting

/// `enumerate` pages by keyset (the rows after the last one seen, in the descriptor's order), on both
/// stores: the same rows in the same order as one fetch, and each row once while others write.
@Suite("Batches: keyset enumeration")
struct BatchEnumerationTests {
    typealias Track = MusicLibrary.Track
    typealias Album = MusicLibrary.Album
    typealias Trip = SampleTrips.Trip

    func music(_ kind: StoreKind) async throws -> StoreFixture {
        try await StoreFixture.make(kind, MusicLibrary.models, service: kind == .service ? try await TestService.seeds() : nil)
    }

    func trips(_ kind: StoreKind) async throws -> StoreFixture {
        try await StoreFixture.make(kind, SampleTrips.models, service: kind == .service ? try await TestService.seeds() : nil)
    }

    /// 41 tracks: durations with duplicates, a genre missing on every third, four albums and some
    /// tracks with none.
    func insertTracks(_ f: StoreFixture) throws {
        let context = f.newContext()
        let albums = ["Blue", "Abbey Road", "Kind of Blue", "Abbey Road"].enumerated().map { i, title in
            Album(id: "\(f.token)-a\(i)", title: title)
        }
        albums.forEach(context.insert)
        for i in 0..<41 {
            let track = Track(id: "\(f.token)-\(i)", title: "T\(i % 7)", duration: Double(i % 5) * 60,
                              genre: i % 3 == 0 ? nil : ["Jazz", "Rock"][i % 2])
            context.insert(track)
            if i % 4 != 0 { track.album = albums[i % albums.count] }
        }
        try context.save()
    }

    func enumerated<T: PersistentModel>(_ f: StoreFixture, _ descriptor: FetchDescriptor<T>, batchSize: Int) throws -> [PersistentIdentifier] {
        var seen: [PersistentIdentifier] = []
        try f.newContext().enumerate(descriptor, batchSize: batchSize) { seen.append($0.persistentModelID) }
        return seen
    }

    @Test(arguments: StoreKind.tested)
    func enumerateMatchesOneFetchForEverySortShape(kind: StoreKind) async throws {
        let f = try await music(kind)
        try await offCooperativePool {
            try insertTracks(f)
            var offsetAndLimit = FetchDescriptor<Track>(sortBy: [SortDescriptor(\.genre, order: .reverse), SortDescriptor(\.duration)])
            offsetAndLimit.fetchOffset = 5
            offsetAndLimit.fetchLimit = 17
            var limitOnly = FetchDescriptor<Track>(sortBy: [SortDescriptor(\.duration)])
            limitOnly.fetchLimit = 9
            let cases: [(String, FetchDescriptor<Track>)] = [
                ("no sort (id)", FetchDescriptor<Track>()),
                ("duplicates in the key", FetchDescriptor<Track>(sortBy: [SortDescriptor(\.duration)])),
                ("DESC then ASC", FetchDescriptor<Track>(sortBy: [SortDescriptor(\.duration, order: .reverse), SortDescriptor(\.title)])),
                ("NULLs ascending", FetchDescriptor<Track>(sortBy: [SortDescriptor(\.genre)])),
                ("NULLs descending", FetchDescriptor<Track>(sortBy: [SortDescriptor(\.genre, order: .reverse)])),
                ("through a to-one", FetchDescriptor<Track>(sortBy: [SortDescriptor(\Track.album?.title), SortDescriptor(\.duration, order: .reverse)])),
                ("through a to-one, DESC", FetchDescriptor<Track>(sortBy: [SortDescriptor(\Track.album?.title, order: .reverse)])),
                ("with a predicate", FetchDescriptor<Track>(predicate: #Predicate { $0.duration > 0 }, sortBy: [SortDescriptor(\.title)])),
                ("offset and limit", offsetAndLimit),
                ("limit", limitOnly),
            ]
            for (name, descriptor) in cases {
                let expected = try f.newContext().fetch(descriptor).map(\.persistentModelID)
                #expect(!expected.isEmpty, "\(name)")
                for batchSize in [1, 4, 10, 100] {
                    #expect(try enumerated(f, descriptor, batchSize: batchSize) == expected, "\(name), batches of \(batchSize)")
                }
            }
        }
    }

    @Test(arguments: StoreKind.tested)
    func enumerateBySubMillisecondDatesKeepsItsPlace(kind: StoreKind) async throws {
        let f = try await trips(kind)
        try await offCooperativePool {
            let context = f.newContext()
            let base = Date(timeIntervalSince1970: 1_750_000_000.000_123)
            for i in 0..<23 {
                // Microsecond dates, several equal: the cursor must compare equal to what is stored.
                context.insert(Trip(name: "\(f.token)-\(i)", destination: "D", startDate: base.addingTimeInterval(Double(i / 3) * 0.000_417),
                                    endDate: base))
            }
            try context.save()
            let descriptor = FetchDescriptor<Trip>(predicate: #Predicate { $0.destination == "D" },
                                                   sortBy: [SortDescriptor(\.startDate, order: .reverse)])
            let expected = try f.newContext().fetch(descriptor).map(\.persistentModelID)
            #expect(expected.count == 23)
            for batchSize in [1, 2, 5] {
                #expect(try enumerated(f, descriptor, batchSize: batchSize) == expected, "batches of \(batchSize)")
            }
        }
    }

    @Test(arguments: StoreKind.tested)
    func enumerateSeesEachRowOnceWhileAnotherClientWrites(kind: StoreKind) async throws {
        let f = try await music(kind)
        try await offCooperativePool {
            let context = f.newContext()
            let originals = (0..<60).map { String(format: "M%03d", $0) }
            for (i, title) in originals.enumerated() { context.insert(Track(id: "\(f.token)-\(i)", title: title)) }
            try context.save()

            let other = ModelContext(try f.otherProcess())
            var deleted: Set<String> = []
            var insertedAfter: Set<String> = []
            var seen: [String] = []
            var batch = 0
            try f.newContext().enumerate(FetchDescriptor<Track>(sortBy: [SortDescriptor(\.title)]), batchSize: 8) { track in
                seen.append(track.title)
                guard seen.count % 8 == 0 else { return }
                // Between batches another client inserts a row before the position (never seen), one
                // after it (seen once), and deletes one not reached yet (never seen).
                // The block runs after its batch was read, so the batch's last row is the position.
                batch += 1
                other.insert(Track(id: "\(f.token)-before-\(batch)", title: "A\(batch)"))
                let after = "Z\(batch)"
                other.insert(Track(id: "\(f.token)-after-\(batch)", title: after))
                insertedAfter.insert(after)
                if track.title.hasPrefix("M"), let position = Int(track.title.dropFirst()), position + 2 < originals.count {
                    let doomed = String(format: "M%03d", position + 2)
                    try other.delete(model: Track.self, where: #Predicate { $0.title == doomed })
                    deleted.insert(doomed)
                }
                try other.save()
            }
            #expect(Set(seen).count == seen.count, "no row twice: \(seen)")
            #expect(!seen.contains { $0.hasPrefix("A") }, "rows inserted before the position are not seen")
            #expect(Set(originals).subtracting(deleted).isSubset(of: Set(seen)), "every row that stayed is seen")
            #expect(deleted.isDisjoint(with: Set(seen)))
            #expect(insertedAfter.isSubset(of: Set(seen)), "rows inserted after the position are seen")
            #expect(deleted.count >= 5)
            #expect(seen == seen.sorted())

            // Unsorted (id order): rows that stayed are seen once, whatever is inserted meanwhile.
            var unsorted: [String] = []
            var round = 0
            try f.newContext().enumerate(FetchDescriptor<Track>(), batchSize: 7) { track in
                unsorted.append(track.title)
                guard unsorted.count % 7 == 0 else { return }
                round += 1
                other.insert(Track(id: "\(f.token)-late-\(round)", title: "L\(round)"))
                try other.save()
            }
            #expect(Set(unsorted).count == unsorted.count)
            #expect(Set(originals).subtracting(deleted).isSubset(of: Set(unsorted)))
        }
    }
}
