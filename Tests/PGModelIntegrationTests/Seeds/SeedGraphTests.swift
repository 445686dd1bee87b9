import Foundation
@_spi(PGModelInternals) import PGModelCore
import Testing

@_spi(PGModelInternals) @testable import PGModel
import PGModelTesting

/// The seed documents' model graphs and example code, on both stores: relationships with automatic
/// inverses, delete rules, faults and prefetching, inheritance with `is`/`as?` predicates, batch
/// deletes, enumeration and background actors.
@Suite("Seed ports: relationships and inheritance")
struct SeedGraphTests {
    typealias Trip = SampleTrips.Trip
    typealias BusinessTrip = SampleTrips.BusinessTrip
    typealias PersonalTrip = SampleTrips.PersonalTrip
    typealias RetreatTrip = SampleTrips.RetreatTrip
    typealias BucketListItem = SampleTrips.BucketListItem
    typealias LivingAccommodation = SampleTrips.LivingAccommodation
    typealias Track = MusicLibrary.Track
    typealias Album = MusicLibrary.Album
    typealias User = MusicLibrary.User

    let day: TimeInterval = 86_400
    let base = Date(timeIntervalSince1970: 1_750_000_000)

    func trips(_ kind: StoreKind) async throws -> StoreFixture {
        try await StoreFixture.make(kind, SampleTrips.models, service: kind == .service ? try await TestService.seeds() : nil)
    }

    func music(_ kind: StoreKind) async throws -> StoreFixture {
        try await StoreFixture.make(kind, MusicLibrary.models, service: kind == .service ? try await TestService.seeds() : nil)
    }

    // MARK: Relationships

    @Test(arguments: StoreKind.tested)
    func insertingATripInsertsItsGraphAndInversesFollow(kind: StoreKind) async throws {
        let f = try await trips(kind)
        try await offCooperativePool {
            let context = f.newContext()
            let trip = Trip(name: "\(f.token)-Rome", destination: "Rome", startDate: base, endDate: base + 3 * day)
            let colosseum = BucketListItem(title: "Colosseum")
            let forum = BucketListItem(title: "Forum")
            trip.bucketList.append(colosseum)
            trip.bucketList.append(forum)
            trip.livingAccommodation = LivingAccommodation(address: "Via Roma 1", placeName: "Hotel Roma")
            // The inverse is kept in step in memory at once, before any save.
            #expect(colosseum.trip === trip)
            #expect(trip.livingAccommodation?.trip === trip)
            context.insert(trip)
            #expect(context.insertedModelsArray.count == 4)
            try context.save()

            let reader = f.newContext()
            let items = try reader.fetch(FetchDescriptor<BucketListItem>(sortBy: [SortDescriptor(\.title)]))
            #expect(items.map(\.title) == ["Colosseum", "Forum"])
            let fetchedTrip = try #require(items.first?.trip)
            #expect(fetchedTrip.name == "\(f.token)-Rome")
            #expect(fetchedTrip.bucketList.count == 2)
            #expect(fetchedTrip.bucketList.allSatisfy { $0.trip === fetchedTrip })
            #expect(fetchedTrip.livingAccommodation?.placeName == "Hotel Roma")
        }
    }

    @Test(arguments: StoreKind.tested)
    func modifyingOneSideOfAManyToManyUpdatesTheOtherWithoutDuplicates(kind: StoreKind) async throws {
        let f = try await music(kind)
        try await offCooperativePool {
            let context = f.newContext()
            let user1 = User(id: "\(f.token)-u1", name: "Ann")
            let user2 = User(id: "\(f.token)-u2", name: "Bob")
            context.insert(user1)
            context.insert(user2)
            try context.save()

            // user1 follows user2 (modifying ONE side)
            user1.following.append(user2)
            #expect(user2.followers.map(\.id) == [user1.id])
            try context.save()

            let reader = f.newContext()
            let users = try reader.fetch(FetchDescriptor<User>(sortBy: [SortDescriptor(\.name)]))
            let (ann, bob) = (users[0], users[1])
            #expect(ann.following.map(\.id) == [bob.id])
            #expect(bob.followers.map(\.id) == [ann.id])
            let user1FollowsUser2 = ann.following.contains { $0.id == bob.id }
            let user2FollowedByUser1 = bob.followers.contains { $0.id == ann.id }
            #expect(user1FollowsUser2 == user2FollowedByUser1)

            // Unfollowing (remove from ONE side only)
            ann.following.removeAll { $0.id == bob.id }
            #expect(bob.followers.isEmpty)
            try reader.save()
            let third = f.newContext()
            let again = try third.fetch(FetchDescriptor<User>(sortBy: [SortDescriptor(\.name)]))
            #expect(again[0].following.isEmpty && again[1].followers.isEmpty)
        }
    }

    @Test(arguments: StoreKind.tested)
    func relinkingAToOneMovesTheModelBetweenToManys(kind: StoreKind) async throws {
        let f = try await music(kind)
        try await offCooperativePool {
            let context = f.newContext()
            let a = Album(id: "\(f.token)-a", title: "A")
            let b = Album(id: "\(f.token)-b", title: "B")
            let track = Track(id: "\(f.token)-t", title: "Song", album: a)
            context.insert(track)
            #expect(a.tracks.map(\.id) == [track.id])
            try context.save()
            track.album = b
            #expect(a.tracks.isEmpty && b.tracks.map(\.id) == [track.id])
            try context.save()
            let reader = f.newContext()
            let albums = try reader.fetch(FetchDescriptor<Album>(sortBy: [SortDescriptor(\.title)]))
            #expect(albums.map { $0.tracks.count } == [0, 1])
        }
    }

    @Test(arguments: StoreKind.tested)
    func aSubclassSeenAsItsBaseClassKeepsItsOwnIdentity(kind: StoreKind) async throws {
        let f = try await trips(kind)
        try await offCooperativePool {
            let context = f.newContext()
            context.author = "identity-\(f.token)"
            let trip: Trip = BusinessTrip(name: "\(f.token)-Cupertino", destination: "Cupertino", startDate: base, endDate: base + day, perdiem: 150)
            #expect(trip.persistentModelID.entityName == "BusinessTrip")
            context.insert(trip)
            try context.save()
            let id = trip.persistentModelID
            #expect(id.entityName == "BusinessTrip" && trip.id == id)
            let fetched = try f.newContext().fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.destination == "Cupertino" }))
            #expect(fetched.map(\.persistentModelID) == [id])
            let author = "identity-\(f.token)"
            let changes = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.author == author }))
                .flatMap(\.changes)
            #expect(changes.map(\.changedPersistentIdentifier) == [id])
        }
    }

    @Test(arguments: StoreKind.tested)
    func modelForAGoneRowIsAFaultWithEmptyValues(kind: StoreKind) async throws {
        let f = try await music(kind)
        try await offCooperativePool {
            let context = f.newContext()
            let album = Album(id: "\(f.token)-gone", title: "Gone")
            context.insert(album)
            try context.save()
            let id = album.persistentModelID
            context.delete(album)
            try context.save()
            // Apple's code, without `try`: SwiftData would hand back a fault that crashes on access.
            let reader = f.newContext()
            let model = reader.model(for: id)
            #expect(reader.lastFaultError?.code == .notFound)
            let fault = try #require(model as? Album)
            #expect(fault.persistentModelID == id)
            #expect(fault.title == "" && fault.tracks.isEmpty)
            #expect(reader.lastFaultError?.code == .notFound)
            #expect(reader.model(for: id) === fault)
        }
    }

    @Test(arguments: StoreKind.tested)
    func deletingAnAlbumCascadesToItsTracks(kind: StoreKind) async throws {
        let f = try await music(kind)
        try await offCooperativePool {
            let context = f.newContext()
            let album = Album(id: "\(f.token)-album", title: "Blue")
            for i in 0..<3 { album.tracks.append(Track(id: "\(f.token)-\(i)", title: "T\(i)")) }
            context.insert(album)
            try context.save()

            let other = f.newContext()
            let tracks = try other.fetch(FetchDescriptor<Track>())
            #expect(tracks.count == 3)
            let fetchedAlbum = try #require(try other.fetch(FetchDescriptor<Album>()).first)
            other.delete(fetchedAlbum)
            try other.save()
            #expect(try other.fetchCount(FetchDescriptor<Track>()) == 0)
            // Registered tracks the cascade removed are deleted models now.
            #expect(tracks.allSatisfy { $0.isDeleted })
            #expect(try f.newContext().fetchCount(FetchDescriptor<Album>()) == 0)
        }
    }

    @Test(arguments: StoreKind.tested)
    func denyRefusesTheDeleteAndWritesNothing(kind: StoreKind) async throws {
        let f = try await music(kind)
        try await offCooperativePool {
            let context = f.newContext()
            let label = MusicLibrary.Label(name: "\(f.token)-label")
            label.artists.append(MusicLibrary.Artist(name: "Nina"))
            context.insert(label)
            try context.save()

            context.delete(label)
            let error = try #require(throws: PGModelError.self) { try context.save() }
            #expect(error.code == .deleteDenied)
            #expect(error.model == "Label" && error.keyPath == "artists")
            context.rollback()
            #expect(try f.newContext().fetchCount(FetchDescriptor<MusicLibrary.Label>()) == 1)

            // With the artist gone (nullify on the artist's side), the label can go.
            let artist = label.artists[0]
            context.delete(artist)
            try context.save()
            #expect(label.artists.isEmpty)
            context.delete(label)
            try context.save()
            #expect(try f.newContext().fetchCount(FetchDescriptor<MusicLibrary.Label>()) == 0)
        }
    }

    @Test(arguments: StoreKind.tested)
    func deletingAnAccommodationNullifiesTheTripsReference(kind: StoreKind) async throws {
        let f = try await trips(kind)
        try await offCooperativePool {
            let context = f.newContext()
            let trip = Trip(name: "\(f.token)-Oslo", destination: "Oslo", startDate: base, endDate: base + day)
            trip.livingAccommodation = LivingAccommodation(address: "Karl Johans gate", placeName: "Grand")
            context.insert(trip)
            try context.save()
            context.delete(try #require(trip.livingAccommodation))
            try context.save()
            #expect(trip.livingAccommodation == nil)
            let fetched = try #require(try f.newContext().fetch(FetchDescriptor<Trip>()).first)
            #expect(fetched.livingAccommodation == nil)
        }
    }

    @Test(arguments: StoreKind.tested)
    func maximumModelCountIsCheckedAtSave(kind: StoreKind) async throws {
        let f = try await music(kind)
        try await offCooperativePool {
            let context = f.newContext()
            let label = MusicLibrary.Label(name: "\(f.token)-big")
            for name in ["a", "b", "c", "d"] { label.artists.append(MusicLibrary.Artist(name: name)) }
            context.insert(label)
            let error = try #require(throws: PGModelError.self) { try context.save() }
            #expect(error.code == .relationshipCount && error.keyPath == "artists")
            label.artists.removeLast()
            try context.save()

            // minimumModelCount: a band needs at least one member before it can be saved.
            let band = MusicLibrary.Band(name: "\(f.token)-band")
            context.insert(band)
            let tooFew = try #require(throws: PGModelError.self) { try context.save() }
            #expect(tooFew.code == .relationshipCount && tooFew.model == "Band" && tooFew.keyPath == "members")
            band.members.append(MusicLibrary.Artist(name: "Solo"))
            try context.save()
        }
    }

    @Test(arguments: StoreKind.tested)
    func prefetchingAlbumsCostsOneExtraQueryNotOnePerTrack(kind: StoreKind) async throws {
        let f = try await music(kind)
        try await offCooperativePool {
            let writer = f.newContext()
            for a in 0..<10 {
                let album = Album(id: "\(f.token)-a\(a)", title: "Album \(a)")
                for t in 0..<10 { album.tracks.append(Track(id: "\(f.token)-a\(a)-t\(t)", title: "Track \(t)")) }
                writer.insert(album)
            }
            try writer.save()

            var descriptor = FetchDescriptor<Track>()
            descriptor.relationshipKeyPathsForPrefetching = [\.album]
            let prefetching = f.newContext()
            let before = prefetching.storeRoundTrips
            let tracks = try prefetching.fetch(descriptor)
            let titles = tracks.compactMap { $0.album?.title }
            #expect(tracks.count == 100 && titles.count == 100)
            #expect(prefetching.storeRoundTrips - before == 2)

            let faulting = f.newContext()
            let start = faulting.storeRoundTrips
            let lazily = try faulting.fetch(FetchDescriptor<Track>())
            #expect(lazily.compactMap { $0.album?.title }.count == 100)
            // One query per distinct album: each album is fetched once, then found in the context.
            #expect(faulting.storeRoundTrips - start == 11)

            var toMany = FetchDescriptor<Album>()
            toMany.relationshipKeyPathsForPrefetching = [\.tracks]
            let albumsContext = f.newContext()
            let albumsStart = albumsContext.storeRoundTrips
            let albums = try albumsContext.fetch(toMany)
            #expect(albums.map(\.tracks.count) == Array(repeating: 10, count: 10))
            #expect(albumsContext.storeRoundTrips - albumsStart == 2)
        }
    }

    // MARK: Inheritance

    func insertMixedTrips(_ f: StoreFixture) throws {
        let context = f.newContext()
        context.insert(Trip(name: "\(f.token)-plain", destination: "Lisbon", startDate: base, endDate: base + day))
        context.insert(BusinessTrip(name: "\(f.token)-expo", destination: "Berlin", startDate: base + day, endDate: base + 2 * day, perdiem: 120.5))
        context.insert(PersonalTrip(name: "\(f.token)-family", destination: "Porto", startDate: base + 2 * day, endDate: base + 3 * day, reason: .family))
        context.insert(RetreatTrip(name: "\(f.token)-retreat", destination: "Bali", startDate: base + 3 * day, endDate: base + 9 * day, retreatCenter: "Ubud"))
        try context.save()
    }

    @Test(arguments: StoreKind.tested)
    func aFetchOfTheBaseClassReturnsEverySubclassAsItself(kind: StoreKind) async throws {
        let f = try await trips(kind)
        try await offCooperativePool {
            try insertMixedTrips(f)
            let context = f.newContext()
            let all = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate)]))
            #expect(all.map { "\(type(of: $0))" } == ["Trip", "BusinessTrip", "PersonalTrip", "RetreatTrip"])
            #expect((all[1] as? BusinessTrip)?.perdiem == 120.5)
            #expect((all[3] as? RetreatTrip)?.retreatCenter == "Ubud")
            #expect((all[3] as? PersonalTrip)?.reason == .wellness)
            #expect(try context.fetch(FetchDescriptor<PersonalTrip>()).count == 2)
            #expect(try context.fetchCount(FetchDescriptor<BusinessTrip>()) == 1)
            // Inherited properties work in a subclass's predicates and sorts.
            let prefix = f.token
            let personal = try context.fetch(FetchDescriptor<PersonalTrip>(
                predicate: #Predicate { $0.name.starts(with: prefix) && $0.destination != "Porto" },
                sortBy: [SortDescriptor(\.startDate, order: .reverse)]))
            #expect(personal.map(\.destination) == ["Bali"])
        }
    }

    @Test(arguments: StoreKind.tested)
    func theSegmentAndSearchPredicatesOfSampleTripsRunInSQL(kind: StoreKind) async throws {
        let f = try await trips(kind)
        try await offCooperativePool {
            try insertMixedTrips(f)
            let context = f.newContext()
            enum Segment { case all, personal, business }
            func trips(_ segment: Segment, searchText: String) throws -> [String] {
                // The seed combines `classPredicate.evaluate($0) && searchPredicate.evaluate($0)`; Linux
                // Foundation's #Predicate has no `evaluate` (PredicateEvaluate is Darwin-only), so the
                // same conditions are spelled out per segment.
                let fullPredicate: Predicate<Trip>
                switch segment {
                case .personal:
                    fullPredicate = #Predicate<Trip> {
                        $0 is PersonalTrip && (searchText.isEmpty ? true :
                            $0.name.localizedStandardContains(searchText) ||
                            $0.destination.localizedStandardContains(searchText))
                    }
                case .business:
                    fullPredicate = #Predicate<Trip> {
                        $0 is BusinessTrip && (searchText.isEmpty ? true :
                            $0.name.localizedStandardContains(searchText) ||
                            $0.destination.localizedStandardContains(searchText))
                    }
                case .all:
                    fullPredicate = #Predicate<Trip> {
                        searchText.isEmpty ? true :
                            $0.name.localizedStandardContains(searchText) ||
                            $0.destination.localizedStandardContains(searchText)
                    }
                }
                return try context.fetch(FetchDescriptor(predicate: fullPredicate, sortBy: [SortDescriptor(\.startDate, order: .forward)]))
                    .map(\.destination)
            }
            #expect(try trips(.all, searchText: "") == ["Lisbon", "Berlin", "Porto", "Bali"])
            #expect(try trips(.personal, searchText: "") == ["Porto", "Bali"])
            #expect(try trips(.business, searchText: "") == ["Berlin"])
            #expect(try trips(.personal, searchText: "BAL") == ["Bali"])
            #expect(try trips(.all, searchText: "o") == ["Lisbon", "Berlin", "Porto"]) // "expo" matches by name

            let reason = PersonalTrip.Reason.family
            let vacation = #Predicate<Trip> {
                if let personal = $0 as? PersonalTrip { personal.reason == reason } else { false }
            }
            #expect(try context.fetch(FetchDescriptor(predicate: vacation)).map(\.destination) == ["Porto"])
        }
    }

    @Test(arguments: StoreKind.tested)
    func theWidgetFetchTakesOneUpcomingTrip(kind: StoreKind) async throws {
        let f = try await trips(kind)
        try await offCooperativePool {
            try insertMixedTrips(f)
            let currentDate = base + 2.5 * day
            var fetchDesc = FetchDescriptor(sortBy: [SortDescriptor(\Trip.startDate, order: .forward)])
            fetchDesc.predicate = #Predicate { $0.endDate >= currentDate }
            fetchDesc.fetchLimit = 1
            let modelContext = f.newContext()
            let upcomingTrips = try modelContext.fetch(fetchDesc)
            #expect(upcomingTrips.map(\.destination) == ["Porto"])
        }
    }

    @Test(arguments: StoreKind.tested)
    func propertiesToFetchAndPrefetchingInAMigrationStyleFetch(kind: StoreKind) async throws {
        let f = try await trips(kind)
        try await offCooperativePool {
            let writer = f.newContext()
            for i in 0..<3 {
                let trip = Trip(name: "\(f.token)-\(i)", destination: "D\(i)", startDate: base, endDate: base + day)
                trip.livingAccommodation = LivingAccommodation(address: "Street \(i)", placeName: "Place \(i)")
                writer.insert(trip)
            }
            try writer.save()

            let context = f.newContext()
            var fetchDesc = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])
            fetchDesc.propertiesToFetch = [\.name]
            fetchDesc.relationshipKeyPathsForPrefetching = [\.livingAccommodation]
            let start = context.storeRoundTrips
            let trips = try context.fetch(fetchDesc)
            #expect(trips.map(\.name) == (0..<3).map { "\(f.token)-\($0)" })
            #expect(trips.map { $0.livingAccommodation?.placeName } == ["Place 0", "Place 1", "Place 2"])
            #expect(context.storeRoundTrips - start == 2)
            // An attribute left out loads on first access, with one query for the model.
            #expect(trips[1].destination == "D1")
            #expect(context.storeRoundTrips - start == 3)
        }
    }

    /// The seed's migration-style fetch on a store holding trips of every class: the relationship is
    /// declared on `Trip`, and whichever class comes first in the result, every model gets its own.
    @Test(arguments: StoreKind.tested)
    func prefetchingAnInheritedRelationshipWorksForAnyMixOfClasses(kind: StoreKind) async throws {
        let f = try await trips(kind)
        try await offCooperativePool {
            let writer = f.newContext()
            let made: [Trip] = [
                Trip(name: "\(f.token)-0-trip", destination: "D0", startDate: base, endDate: base + day),
                BusinessTrip(name: "\(f.token)-1-business", destination: "D1", startDate: base + day, endDate: base + 2 * day, perdiem: 120.5),
                PersonalTrip(name: "\(f.token)-2-personal", destination: "D2", startDate: base + 2 * day, endDate: base + 3 * day, reason: .family),
                RetreatTrip(name: "\(f.token)-3-retreat", destination: "D3", startDate: base + 3 * day, endDate: base + 4 * day, retreatCenter: "Kripalu"),
                BusinessTrip(name: "\(f.token)-4-business", destination: "D4", startDate: base + 4 * day, endDate: base + 5 * day, perdiem: 80),
            ]
            for (i, trip) in made.enumerated() {
                if i != 4 { trip.livingAccommodation = LivingAccommodation(address: "Street \(i)", placeName: "Place \(i)") }
                for j in 0..<i { trip.bucketList.append(BucketListItem(title: "item \(i).\(j)")) }
                writer.insert(trip)
            }
            try writer.save()
            let places: [String?] = ["Place 0", "Place 1", "Place 2", "Place 3", nil]
            let classes = ["Trip", "BusinessTrip", "PersonalTrip", "RetreatTrip", "BusinessTrip"]

            // Every class comes first in one of these orders; each runs in a context of its own.
            let orders: [[SortDescriptor<Trip>]] = [
                [SortDescriptor(\.startDate)], [SortDescriptor(\.startDate, order: .reverse)],
                [SortDescriptor(\.destination, order: .reverse)], [SortDescriptor(\.endDate, order: .reverse)],
            ]
            for sortBy in orders {
                for partial in [true, false] {
                    let context = f.newContext()
                    var fetchDesc = FetchDescriptor<Trip>(sortBy: sortBy)
                    if partial { fetchDesc.propertiesToFetch = [\.name] }
                    fetchDesc.relationshipKeyPathsForPrefetching = [\.livingAccommodation, \.bucketList]
                    let start = context.storeRoundTrips
                    let trips = try context.fetch(fetchDesc)
                    #expect(context.storeRoundTrips - start == 3, "one fetch and one query per prefetched key path")
                    #expect(trips.count == 5)
                    for trip in trips {
                        let i = try #require(Int(trip.name.split(separator: "-").dropLast().last ?? ""))
                        #expect("\(type(of: trip))" == classes[i])
                        #expect(trip.livingAccommodation?.placeName == places[i])
                        #expect(trip.livingAccommodation?.trip === trip || places[i] == nil)
                        #expect(trip.bucketList.map(\.title).sorted() == (0..<i).map { "item \(i).\($0)" })
                        if let business = trip as? BusinessTrip { #expect(business.perdiem == (i == 1 ? 120.5 : 80)) }
                        if let retreat = trip as? RetreatTrip { #expect(retreat.retreatCenter == "Kripalu") }
                    }
                }
            }

            // Faults: the same relationships, loaded one model at a time through each class's accessor.
            let context = f.newContext()
            for trip in try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate, order: .reverse)])) {
                let i = try #require(Int(trip.name.split(separator: "-").dropLast().last ?? ""))
                #expect(trip.livingAccommodation?.placeName == places[i])
                #expect(trip.bucketList.count == i)
            }
            #expect(context.lastFaultError == nil)

            // A subclass fetch prefetches the relationship its superclass declares.
            let personal = f.newContext()
            var personalDesc = FetchDescriptor<PersonalTrip>(sortBy: [SortDescriptor(\.startDate, order: .reverse)])
            personalDesc.relationshipKeyPathsForPrefetching = [\.livingAccommodation, \.bucketList]
            let personalTrips = try personal.fetch(personalDesc)
            #expect(personalTrips.map { "\(type(of: $0))" } == ["RetreatTrip", "PersonalTrip"])
            #expect(personalTrips.map { $0.livingAccommodation?.placeName } == ["Place 3", "Place 2"])
            #expect(personalTrips.map(\.bucketList.count) == [3, 2])

            // Assigning across classes: an accommodation moves from a BusinessTrip to a RetreatTrip.
            let mover = f.newContext()
            let all = try mover.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate)]))
            let stay = try #require(all[1].livingAccommodation)
            all[4].livingAccommodation = stay
            #expect(stay.trip === all[4])
            try mover.save()
            let check = try f.newContext().fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate)]))
            #expect(check.map { $0.livingAccommodation?.placeName } == ["Place 0", nil, "Place 2", "Place 3", "Place 1"])
        }
    }

    @Test(arguments: StoreKind.tested)
    func polymorphicToManyHoldsMixedSubclasses(kind: StoreKind) async throws {
        let f = try await trips(kind)
        try await offCooperativePool {
            let context = f.newContext()
            let planner = SampleTrips.TravelPlanner(name: "\(f.token)-planner")
            planner.upcomingTrips.append(BusinessTrip(name: "\(f.token)-b", destination: "Paris", startDate: base, endDate: base, perdiem: 80))
            planner.upcomingTrips.append(PersonalTrip(name: "\(f.token)-p", destination: "Nice", startDate: base + day, endDate: base + day, reason: .reunion))
            context.insert(planner)
            try context.save()
            let fetched = try #require(try f.newContext().fetch(FetchDescriptor<SampleTrips.TravelPlanner>()).first)
            let kinds = Set(fetched.upcomingTrips.map { "\(type(of: $0))" })
            #expect(kinds == ["BusinessTrip", "PersonalTrip"])
            for trip in fetched.upcomingTrips {
                if let business = trip as? BusinessTrip { #expect(business.perdiem == 80) }
            }
        }
    }

    // MARK: Batch work

    @Test(arguments: StoreKind.tested)
    func batchDeleteIsOneSaveAndMarksRegisteredModels(kind: StoreKind) async throws {
        let f = try await music(kind)
        try await offCooperativePool {
            let context = f.newContext()
            for i in 0..<6 {
                context.insert(Track(id: "\(f.token)-\(i)", title: "T\(i)", genre: i.isMultiple(of: 2) ? "Classical" : "Rock"))
            }
            try context.save()
            let registered = try context.fetch(FetchDescriptor<Track>(sortBy: [SortDescriptor(\.title)]))
            try context.delete(model: Track.self, where: #Predicate { $0.genre == "Classical" })
            try context.save()
            #expect(try context.fetchCount(FetchDescriptor<Track>()) == 3)
            #expect(registered.filter(\.isDeleted).map(\.title) == ["T0", "T2", "T4"])
        }
    }

    @Test(arguments: StoreKind.tested)
    func deleteWithoutSubclassesKeepsThem(kind: StoreKind) async throws {
        let f = try await trips(kind)
        try await offCooperativePool {
            try insertMixedTrips(f)
            let context = f.newContext()
            try context.delete(model: PersonalTrip.self, where: nil, includeSubclasses: false)
            try context.save()
            #expect(try context.fetch(FetchDescriptor<Trip>()).map { "\(type(of: $0))" }.sorted() == ["BusinessTrip", "RetreatTrip", "Trip"])
        }
    }

    @Test(arguments: StoreKind.tested)
    func enumerateVisitsEveryModelInBatches(kind: StoreKind) async throws {
        let f = try await music(kind)
        try await offCooperativePool {
            let context = f.newContext()
            for i in 0..<25 { context.insert(Track(id: "\(f.token)-\(i)", title: String(format: "T%02d", i))) }
            try context.save()
            let reader = f.newContext()
            var titles: [String] = []
            let start = reader.storeRoundTrips
            try reader.enumerate(FetchDescriptor<Track>(sortBy: [SortDescriptor(\.title)]), batchSize: 10) { titles.append($0.title) }
            #expect(titles == (0..<25).map { String(format: "T%02d", $0) })
            #expect(reader.storeRoundTrips - start == 3)
            // Memory holds one batch: the visited models are gone, and so are their registry entries.
            #expect(reader.registeredModels().isEmpty)

            let batched = try reader.fetch(FetchDescriptor<Track>(sortBy: [SortDescriptor(\.title)]), batchSize: 7)
            #expect(batched.count == 25)
            #expect(batched[24].title == "T24" && batched[0].title == "T00")
        }
    }
}

/// `@ModelActor`: a background importer owns its context; identifiers cross actors, models do not.
@ModelActor
actor TrackImporter {
    func importTracks(_ titles: [String], token: String) throws -> [PersistentIdentifier] {
        let tracks = titles.map { MusicLibrary.Track(id: "\(token)-\($0)", title: $0) }
        tracks.forEach(modelContext.insert)
        try modelContext.save()
        return tracks.map(\.persistentModelID)
    }

    func title(of id: PersistentIdentifier) -> String? {
        self[id, as: MusicLibrary.Track.self]?.title
    }
}

@Suite("Seed ports: @ModelActor")
struct ModelActorTests {
    @Test(arguments: StoreKind.tested)
    func aBackgroundActorImportsAndHandsBackIdentifiers(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, MusicLibrary.models, service: kind == .service ? try await TestService.seeds() : nil)
        let importer = TrackImporter(modelContainer: f.container)
        let ids = try await importer.importTracks(["One", "Two"], token: f.token)
        #expect(ids.count == 2)
        #expect(await importer.title(of: ids[1]) == "Two")
        let titles = try await offCooperativePool {
            let context = f.newContext()
            return ids.map { (context.model(for: $0) as? MusicLibrary.Track)?.title }
        }
        #expect(titles == ["One", "Two"])
    }
}
