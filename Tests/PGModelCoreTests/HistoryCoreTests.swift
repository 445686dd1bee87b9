import Foundation
@_spi(PGModelInternals) import PGModelCore
import PGModelTestSupport
import Testing

// Observers' dependency sets and the history request's wire form (no database).

@Suite("Core: observer dependencies and history requests")
struct HistoryCoreTests {
    let schema = GraphTestSchema.schema

    @Test func aFetchDependsOnItsHierarchy() {
        #expect(schema.dependencies(of: FetchRequest(entity: "PersonalTrip")) == ["Trip"])
        #expect(schema.dependencies(of: FetchRequest(entity: "Track")) == ["Track"])
    }

    @Test func predicatesAndSortsAddTheEntitiesTheyReach() {
        let viaToOne = FetchRequest(entity: "Track", predicate: .compare(.equal, .key("album.publisher.name"), .value(.string("X"))))
        #expect(schema.dependencies(of: viaToOne) == ["Track", "Album", "Publisher"])
        let viaAggregate = FetchRequest(entity: "Album",
            predicate: .aggregate(Aggregate(.any, relationship: "tracks", predicate: .compare(.greater, .key("duration"), .value(.int(10))))))
        #expect(schema.dependencies(of: viaAggregate) == ["Album", "Track"])
        let viaSort = FetchRequest(entity: "Track", sort: [SortKey("album.title")])
        #expect(schema.dependencies(of: viaSort) == ["Track", "Album"])
        // A subclass's relationship, reached through an `as?` cast, counts for the base fetch too.
        let plain = FetchRequest(entity: "Trip", predicate: .compare(.equal, .key("destination"), .value(.string("Paris"))))
        #expect(schema.dependencies(of: plain) == ["Trip"])
    }

    @Test func historyRequestsRoundTripThroughJSON() throws {
        var request = HistoryRequest(filter: .and([
            .token(.greater, 4711), .author(.equal, nil), .authorIn(["App"]), .entities(["Trip"]),
            .or([.transactionIdentifier(.less, 3), .not(.timestamp(.greaterOrEqual, Date(timeIntervalSince1970: 1_000)))]),
            .all, .none,
        ]))
        request.newestFirst = true
        request.limit = 1
        request.changedEntities = ["Trip"]
        let data = try JSONEncoder().encode(request)
        #expect(try JSONDecoder().decode(HistoryRequest.self, from: data) == request)
        let empty = try JSONDecoder().decode(HistoryRequest.self, from: Data("{}".utf8))
        #expect(empty == HistoryRequest())
    }

    @Test func malformedFiltersAreRejected() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(HistoryFilter.self, from: Data(#"{"token":{"op":"gt","value":1},"author":{"op":"eq"}}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(HistoryFilter.self, from: Data(#"{"bogus":true}"#.utf8))
        }
    }

    @Test func historyRecordsRoundTripThroughJSON() throws {
        let record = HistoryRecord(token: 9, transactionIdentifier: 2, author: "App", timestamp: Date(timeIntervalSince1970: 5),
            changes: [HistoryChangeRecord(changeIdentifier: 1, kind: .update, entity: "Trip", id: UUID(),
                                          updatedAttributes: ["name"], values: ["name": .string("Rome")])])
        let data = try JSONEncoder().encode(record)
        #expect(try JSONDecoder().decode(HistoryRecord.self, from: data) == record)
    }
}
