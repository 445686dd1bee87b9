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
        // Sort keys travel only when there are some, in fetch's form.
        #expect(!String(decoding: data, as: UTF8.self).contains("sort"))
        request.sort = [HistorySortKey(.author, ascending: false)]
        // Sorted keys: JSONEncoder's key order otherwise follows the process's hash seed.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let sorted = try encoder.encode(request)
        #expect(String(decoding: sorted, as: UTF8.self).contains(#""sort":[{"key":"author","order":"reverse"}]"#))
        #expect(try JSONDecoder().decode(HistoryRequest.self, from: sorted) == request)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(HistoryRequest.self, from: Data(#"{"sort":[{"key":"timestamp"}]}"#.utf8))
        }
    }

    @Test func resumingASortedHistoryComesAfterTheLastTransactionInItsOrder() {
        let byApp = HistoryRecord(token: 7, transactionIdentifier: 1, author: "App", timestamp: .now)
        let anonymous = HistoryRecord(token: 8, transactionIdentifier: 2, timestamp: .now)
        #expect(HistoryRequest().condition(after: byApp) == .token(.greater, 7))
        #expect(HistoryRequest(newestFirst: true).condition(after: byApp) == .token(.less, 7))
        let ascending = HistoryRequest(sort: [HistorySortKey(.author)])
        #expect(ascending.condition(after: byApp) == .or([.author(.greater, "App"), .and([.author(.equal, "App"), .token(.greater, 7)])]))
        #expect(ascending.condition(after: anonymous) == .or([.author(.notEqual, nil), .and([.author(.equal, nil), .token(.greater, 8)])]))
        let descending = HistoryRequest(newestFirst: true, sort: [HistorySortKey(.author, ascending: false)])
        #expect(descending.condition(after: byApp)
            == .or([.or([.author(.less, "App"), .author(.equal, nil)]), .and([.author(.equal, "App"), .token(.less, 7)])]))
        // Nothing sorts after no author when nil comes last: only the same author's older ones remain.
        #expect(descending.condition(after: anonymous) == .and([.author(.equal, nil), .token(.less, 8)]))
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
        var stated = record
        stated.bundleIdentifier = "Tool"
        stated.processIdentifier = "42"
        #expect(try JSONDecoder().decode(HistoryRecord.self, from: try JSONEncoder().encode(stated)) == stated)
    }

    @Test func anotherUsersStatedProcessIsShownAsTheirs() {
        #expect(ProcessIdentity.shown("42", savedBy: "bob", readBy: "alice") == "bob@42")
        #expect(ProcessIdentity.shown("42", savedBy: "bob", readBy: nil) == "bob@42", "a direct reader too")
        #expect(ProcessIdentity.shown("42", savedBy: "bob", readBy: "bob") == "42")
        #expect(ProcessIdentity.shown("42", savedBy: nil, readBy: "alice") == "42", "a direct save is the store's own word")
        #expect(ProcessIdentity.shown(nil, savedBy: "bob", readBy: "alice") == nil)
        #expect(ProcessIdentity.processIdentifier == String(ProcessInfo.processInfo.processIdentifier))
        #expect(!ProcessIdentity.bundleIdentifier.isEmpty)
    }
}
