import Foundation
@_spi(PGModelInternals) import PGModelCore
import Testing

@_spi(PGModelInternals) @testable import PGModel
import PGModelTesting

/// Set-based saves through ModelContext, on both stores: one save of many updates, deletes
/// and links writes what the app asked for, upserts still remap, and delete rules still hold.
@Suite("Set-based writes through ModelContext")
struct SetWriteBehaviorTests {
    typealias Track = MusicLibrary.Track
    typealias Album = MusicLibrary.Album
    typealias User = MusicLibrary.User

    func music(_ kind: StoreKind) async throws -> StoreFixture {
        try await StoreFixture.make(kind, MusicLibrary.models, service: kind == .service ? try await TestService.seeds() : nil)
    }

    @Test(arguments: StoreKind.tested)
    func oneSaveOfManyUpdatesDeletesAndLinks(kind: StoreKind) async throws {
        let f = try await music(kind)
        try await offCooperativePool {
            let context = f.newContext()
            let albums = (0..<30).map { Album(id: "\(f.token)-a\($0)", title: "Album \($0)", year: 1990 + $0) }
            for album in albums {
                context.insert(album)
                album.tracks = (0..<2).map { Track(id: "\(f.token)-\(album.id)-t\($0)", title: "T\($0)", duration: Double($0)) }
            }
            let users = (0..<20).map { User(id: "\(f.token)-u\($0)", name: "U\($0)") }
            users.forEach(context.insert)
            try context.save()

            // One save: every album retitled (every third one's year too), ten albums deleted (their
            // tracks cascade), user 0 follows everyone else, and an insert meets an album's unique id.
            for (i, album) in albums.enumerated() {
                album.title = "Renamed \(i)"
                if i % 3 == 0 { album.year = 2020 }
            }
            for album in albums.suffix(10) { context.delete(album) }
            users[0].following = Array(users.dropFirst())
            let again = Album(id: "\(f.token)-a0", title: "Upserted", year: 1)
            context.insert(again)
            try context.save()
            #expect(again.persistentModelID == albums[0].persistentModelID)

            let reader = f.newContext()
            let stored = try reader.fetch(FetchDescriptor<Album>(sortBy: [SortDescriptor(\.id)]))
            #expect(stored.count == 20)
            let byID = Dictionary(uniqueKeysWithValues: stored.map { ($0.id, $0) })
            #expect(byID["\(f.token)-a0"]?.title == "Upserted" && byID["\(f.token)-a0"]?.year == 1)
            for i in 1..<20 {
                #expect(byID["\(f.token)-a\(i)"]?.title == "Renamed \(i)")
                #expect(byID["\(f.token)-a\(i)"]?.year == (i % 3 == 0 ? 2020 : 1990 + i))
            }
            #expect(try reader.fetchCount(FetchDescriptor<Track>()) == 40)
            let fetchedUsers = try reader.fetch(FetchDescriptor<User>(sortBy: [SortDescriptor(\.name)]))
            let first = try #require(fetchedUsers.first { $0.name == "U0" })
            #expect(Set(first.following.map(\.name)) == Set((1..<20).map { "U\($0)" }))
            #expect(fetchedUsers.filter { $0.name != "U0" }.allSatisfy { $0.followers.map(\.name) == ["U0"] })

            // Half unfollowed and the rest renamed in one save.
            users[0].following = Array(users[1..<10])
            for user in users.dropFirst() { user.name += "!" }
            try context.save()
            let later = f.newContext()
            let follower = try #require(try later.fetch(FetchDescriptor<User>()).first { $0.name == "U0!" || $0.name == "U0" })
            #expect(Set(follower.following.map(\.name)) == Set((1..<10).map { "U\($0)!" }))
        }
    }

    @Test(arguments: StoreKind.tested)
    func denyStopsAWholeSaveOfManyDeletes(kind: StoreKind) async throws {
        let f = try await music(kind)
        try await offCooperativePool {
            let context = f.newContext()
            let labels = (0..<4).map { MusicLibrary.Label(name: "\(f.token)-l\($0)") }
            labels.forEach(context.insert)
            let artist = MusicLibrary.Artist(name: "\(f.token)-artist")
            labels[2].artists.append(artist)
            try context.save()

            for label in labels {
                label.name += "-renamed"
                context.delete(label)
            }
            #expect { try context.save() } throws: { ($0 as? PGModelError)?.code == .deleteDenied && ($0 as? PGModelError)?.model == "Label" }
            #expect(try f.newContext().fetchCount(FetchDescriptor<MusicLibrary.Label>()) == 4)
            context.rollback()

            // Without the artist, the labels go in one save.
            context.delete(artist)
            labels.forEach(context.delete)
            try context.save()
            #expect(try f.newContext().fetchCount(FetchDescriptor<MusicLibrary.Label>()) == 0)
        }
    }
}
