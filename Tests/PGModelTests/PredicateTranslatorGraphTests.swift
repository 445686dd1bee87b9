import Foundation
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelCore
import Testing

// Relationships and inheritance in predicates and sort descriptors (models in GraphTestModels.swift).

func graphTranslator<Model: PersistentModel>(_ type: Model.Type) throws -> PredicateTranslator<Model> {
    PredicateTranslator<Model>(entity: try #require(Schema([type]).entity(for: type)))
}

private func key(_ name: String) -> QueryExpression { .key(name) }
private func string(_ s: String) -> QueryExpression { .value(.string(s)) }

@Suite("PredicateTranslator: to-one relationships")
struct PredicateTranslatorToOneTests {
    @Test func optionalChainingIsADottedKey() throws {
        let t = try graphTranslator(Track.self)
        #expect(try t.translate(#Predicate<Track> { $0.album?.title == "X" })
            == .compare(.equal, key("album.title"), string("X")))
        // NULL through a missing album: `!=` stays true for it, as in Swift, by the IR's nil-aware inequality.
        #expect(try t.translate(#Predicate<Track> { $0.album?.title != "X" })
            == .compare(.notEqual, key("album.title"), string("X")))
        #expect(try t.translate(#Predicate<Track> { $0.album.flatMap { $0.title } == "X" })
            == .compare(.equal, key("album.title"), string("X")))
        let s = try graphTranslator(Stay.self)
        #expect(try s.translate(#Predicate<Stay> { $0.trip?.livingAccommodation?.name == "Ritz" })
            == .compare(.equal, key("trip.livingAccommodation.name"), string("Ritz")))
    }

    @Test func relationshipKeysAreTheRelatedId() throws {
        let t = try graphTranslator(Track.self)
        #expect(try t.translate(#Predicate<Track> { $0.album == nil })
            == .compare(.equal, key("album"), .value(.null)))
        #expect(try t.translate(#Predicate<Track> { $0.album != nil })
            == .compare(.notEqual, key("album"), .value(.null)))
        // A captured model cannot be written in a #Predicate on Linux (`Value` needs Codable and Sendable), so
        // relationships compare with nil here; `Translator` binds a model value's id where one occurs.
    }

    @Test func nilCoalescingAndIfLet() throws {
        let t = try graphTranslator(Track.self)
        #expect(try t.translate(#Predicate<Track> { ($0.album?.year ?? 0) > 1990 })
            == .compare(.greater, .coalesce(key("album.year"), .value(.int(0))), .value(.int(1990))))
        // The else-branch decides for tracks without an album, whatever the body would say about NULLs.
        #expect(try t.translate(#Predicate<Track> {
            if let a = $0.album { a.title == "X" } else { false }
        }) == .conditional(.compare(.notEqual, key("album"), .value(.null)),
                           .compare(.equal, key("album.title"), string("X")), .false))
        // Without `??`, a guarded transform is NULL for a missing album.
        #expect(try t.translate(#Predicate<Track> { $0.album.flatMap { $0.title == "X" } == true })
            == .compare(.equal, .conditional(.compare(.notEqual, key("album"), .value(.null)),
                                             .compare(.equal, key("album.title"), string("X")), .value(.null)), .true))
    }

    @Test func forcedUnwrapOfARelationship() throws {
        let t = try graphTranslator(Track.self)
        #expect(try t.translate(#Predicate<Track> { $0.album!.title == "X" })
            == .compare(.equal, key("album.title"), string("X")))
    }

    @Test func unsupportedUsesOfRelationships() throws {
        let t = try graphTranslator(Track.self)
        expectUnsupported(#Predicate<Track> { $0 == $0 }, naming: "Variable", entity: "Track", translator: t)
        let a = try graphTranslator(Album.self)
        expectUnsupported(#Predicate<Album> { $0.tracks.first?.title == "x" }, naming: "to-many relationship",
                          entity: "Album", translator: a)
    }
}

@Suite("PredicateTranslator: model inheritance")
struct PredicateTranslatorInheritanceTests {
    @Test func typeCheckIsIsKind() throws {
        let t = try graphTranslator(Trip.self)
        #expect(try t.translate(#Predicate<Trip> { $0 is PersonalTrip }) == .isKind("PersonalTrip"))
        #expect(try t.translate(#Predicate<Trip> { !($0 is BusinessTrip) || $0.name == "x" })
            == .or([.not(.isKind("BusinessTrip")), .compare(.equal, key("name"), string("x"))]))
        // A class check that always holds.
        #expect(try t.translate(#Predicate<Trip> { $0 is Trip }) == .true)
    }

    @Test func conditionalCastGuardsSubclassAttributes() throws {
        let t = try graphTranslator(Trip.self)
        let reason = PersonalTrip.Reason.family
        #expect(try t.translate(#Predicate<Trip> {
            if let p = $0 as? PersonalTrip { p.reason == reason } else { false }
        }) == .conditional(.isKind("PersonalTrip"), .compare(.equal, key("reason"), string("family")), .false))
        #expect(try t.translate(#Predicate<Trip> { ($0 as? BusinessTrip)?.perdiem ?? 0 > 100 })
            == .compare(.greater, .conditional(.isKind("BusinessTrip"), key("perdiem"), .value(.double(0))),
                        .value(.double(100))))
        #expect(try t.translate(#Predicate<Trip> { ($0 as? BusinessTrip)?.perdiem == 10 })
            == .compare(.equal, .conditional(.isKind("BusinessTrip"), key("perdiem"), .value(.null)),
                        .value(.double(10))))
    }

    @Test func castsOfRelatedModelsThrow() throws {
        let s = try graphTranslator(Stay.self)
        expectUnsupported(#Predicate<Stay> { $0.trip is PersonalTrip }, naming: "TypeCheck", entity: "Stay",
                          translator: s)
    }
}

@Suite("PredicateTranslator: to-many relationships")
struct PredicateTranslatorToManyTests {
    @Test func countAndIsEmpty() throws {
        let t = try graphTranslator(Album.self)
        #expect(try t.translate(#Predicate<Album> { $0.tracks.count > 10 })
            == .compare(.greater, .aggregate(Aggregate(.count, relationship: "tracks")), .value(.int(10))))
        #expect(try t.translate(#Predicate<Album> { $0.tracks.isEmpty })
            == .not(.aggregate(Aggregate(.any, relationship: "tracks"))))
        #expect(try t.translate(#Predicate<Album> { !$0.tracks.isEmpty })
            == .aggregate(Aggregate(.any, relationship: "tracks")))
    }

    @Test func closuresAreOverTheDestination() throws {
        let t = try graphTranslator(Album.self)
        let minimum = 180.0
        #expect(try t.translate(#Predicate<Album> { $0.tracks.contains { $0.duration > minimum } })
            == .aggregate(Aggregate(.any, relationship: "tracks",
                                    predicate: .compare(.greater, key("duration"), .value(.double(180))))))
        #expect(try t.translate(#Predicate<Album> { $0.tracks.contains(where: { $0.title == "Intro" }) })
            == .aggregate(Aggregate(.any, relationship: "tracks", predicate: .compare(.equal, key("title"), string("Intro")))))
        #expect(try t.translate(#Predicate<Album> { $0.tracks.allSatisfy { $0.duration < 600 } })
            == .aggregate(Aggregate(.all, relationship: "tracks",
                                    predicate: .compare(.less, key("duration"), .value(.double(600))))))
        #expect(try t.translate(#Predicate<Album> { $0.tracks.filter { $0.duration > 180 }.count >= 2 })
            == .compare(.greaterOrEqual,
                        .aggregate(Aggregate(.count, relationship: "tracks",
                                             predicate: .compare(.greater, key("duration"), .value(.double(180))))),
                        .value(.int(2))))
        #expect(try t.translate(#Predicate<Album> { $0.tracks.filter { $0.duration > 180 }.isEmpty })
            == .not(.aggregate(Aggregate(.any, relationship: "tracks",
                                         predicate: .compare(.greater, key("duration"), .value(.double(180)))))))
        // allSatisfy over a filtered relationship: every track fails the filter or passes the test.
        #expect(try t.translate(#Predicate<Album> { $0.tracks.filter { $0.duration > 180 }.allSatisfy { $0.title != "" } })
            == .aggregate(Aggregate(.all, relationship: "tracks", predicate: .or([
                .not(.compare(.greater, key("duration"), .value(.double(180)))),
                .compare(.notEqual, key("title"), string("")),
            ]))))
    }

    @Test func relationshipsInsideClosures() throws {
        let t = try graphTranslator(Album.self)
        // The track's own album, from inside the closure.
        #expect(try t.translate(#Predicate<Album> { $0.tracks.contains { $0.album?.title == "B" } })
            == .aggregate(Aggregate(.any, relationship: "tracks", predicate: .compare(.equal, key("album.title"), string("B")))))
        let u = try graphTranslator(User.self)
        #expect(try u.translate(#Predicate<User> { $0.followers.contains { $0.following.count > 100 } })
            == .aggregate(Aggregate(.any, relationship: "followers", predicate: .compare(
                .greater, .aggregate(Aggregate(.count, relationship: "following")), .value(.int(100))))))
    }

    @Test func toManyThroughAToOne() throws {
        let t = try graphTranslator(Track.self)
        let count = QueryExpression.aggregate(Aggregate(.count, relationship: "album.tracks"))
        let hasAlbum = QueryExpression.compare(.notEqual, key("album"), .value(.null))
        #expect(try t.translate(#Predicate<Track> { ($0.album?.tracks.count ?? 0) > 3 })
            == .compare(.greater, .conditional(hasAlbum, count, .value(.int(0))), .value(.int(3))))
        #expect(try t.translate(#Predicate<Track> { $0.album?.tracks.count == 3 })
            == .compare(.equal, .conditional(hasAlbum, count, .value(.null)), .value(.int(3))))
    }

    @Test func outerVariableInsideAClosureThrows() throws {
        let t = try graphTranslator(Album.self)
        expectUnsupported(#Predicate<Album> { album in album.tracks.contains { $0.title == album.title } },
                          naming: "enclosing closure's model", entity: "Album", translator: t)
    }

    @Test func unsupportedCollectionOperations() throws {
        let t = try graphTranslator(Album.self)
        expectUnsupported(#Predicate<Album> { $0.tracks.first?.title == "x" }, naming: "to-many relationship",
                          entity: "Album", translator: t)
        expectUnsupported(#Predicate<Album> { $0.tracks.filter { $0.duration > 1 }.first?.title == "x" },
                          naming: "to-many relationship", entity: "Album", translator: t)
    }
}

@Suite("PredicateTranslator: sorting through relationships")
struct PredicateTranslatorRelationshipSortTests {
    @Test func toOneKeyPathsAreDottedSortKeys() throws {
        let t = try graphTranslator(Track.self)
        #expect(try t.translate([SortDescriptor(\Track.album?.title), SortDescriptor(\Track.title, order: .reverse)])
            == [SortKey("album.title"), SortKey("title", ascending: false)])
        #expect(try t.translate([SortDescriptor(\Track.album?.year, order: .reverse)])
            == [SortKey("album.year", ascending: false)])
        let s = try graphTranslator(Stay.self)
        #expect(try s.translate([SortDescriptor(\Stay.trip?.livingAccommodation?.name)])
            == [SortKey("trip.livingAccommodation.name")])
    }

    @Test func toManyInASortThrows() throws {
        let t = try graphTranslator(Track.self)
        let error = #expect(throws: PGModelError.self) {
            try t.translate([SortDescriptor(\Track.album?.tracks.count)])
        }
        #expect(error?.code == .unsupportedSort)
        #expect(error?.model == "Track")
    }
}
