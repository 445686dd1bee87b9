import Foundation
@_spi(PGModelInternals) @testable import PGModel
@_spi(PGModelInternals) import PGModelCore
import Testing

// History predicates, sorts and limits as the store sees them (the seed's token-then-changes fetch included).

private func request(_ predicate: Predicate<DefaultHistoryTransaction>?) throws -> HistoryRequest {
    try HistoryPredicateTranslator.request(for: HistoryDescriptor(predicate: predicate))
}

@Suite("HistoryPredicateTranslator")
struct HistoryPredicateTranslatorTests {
    let saved = DefaultHistoryToken(value: 4711, storeIdentifier: "public")

    @Test func tokenComparisonsCompareTransactionIDs() throws {
        let saved = saved
        #expect(try request(#Predicate { $0.token > saved }).filter == .token(.greater, 4711))
        #expect(try request(#Predicate { $0.token <= saved }).filter == .token(.lessOrEqual, 4711))
        #expect(try request(#Predicate { saved < $0.token }).filter == .token(.greater, 4711))
    }

    @Test func authorsTimestampsAndTransactionIdentifiers() throws {
        let cutoff = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(try request(#Predicate { $0.author == "App" }).filter == .author(.equal, "App"))
        #expect(try request(#Predicate { $0.author != "Server" }).filter == .author(.notEqual, "Server"))
        #expect(try request(#Predicate { $0.author == nil }).filter == .author(.equal, nil))
        #expect(try request(#Predicate { $0.timestamp >= cutoff }).filter == .timestamp(.greaterOrEqual, cutoff))
        #expect(try request(#Predicate { $0.transactionIdentifier > 10 }).filter == .transactionIdentifier(.greater, 10))
    }

    @Test func theSeedsTokenAndEntityPredicate() throws {
        let historyToken = saved
        let entityNames = ["LivingAccommodation", "Trip"]
        let fullPredicate = #Predicate<DefaultHistoryTransaction> {
            $0.token > historyToken
                && $0.changes.contains { change in entityNames.contains(change.changedPersistentIdentifier.entityName) }
        }
        #expect(try request(fullPredicate).filter == .and([.token(.greater, 4711), .entities(["LivingAccommodation", "Trip"])]))
        let single = #Predicate<DefaultHistoryTransaction> {
            $0.changes.contains { $0.changedPersistentIdentifier.entityName == "Trip" || $0.changedPersistentIdentifier.entityName == "Album" }
        }
        #expect(try request(single).filter == .entities(["Trip", "Album"]))
    }

    @Test func logicAndConstantsFold() throws {
        let saved = saved
        #expect(try request(#Predicate { $0.author == "App" || !($0.token > saved) }).filter
            == .or([.author(.equal, "App"), .not(.token(.greater, 4711))]))
        #expect(try request(#Predicate { _ in true }).filter == .all)
        #expect(try request(nil).filter == .all)
    }

    @Test func sortByAndFetchLimitBecomeOrderAndLimit() throws {
        var descriptor = HistoryDescriptor<DefaultHistoryTransaction>()
        descriptor.sortBy = [.init(\.transactionIdentifier, order: .reverse)]
        descriptor.fetchLimit = 1
        let translated = try HistoryPredicateTranslator.request(for: descriptor)
        #expect(translated.newestFirst)
        #expect(translated.limit == 1)
        descriptor.sortBy = [.init(\.token)]
        descriptor.fetchLimit = 0
        let forward = try HistoryPredicateTranslator.request(for: descriptor)
        #expect(!forward.newestFirst)
        #expect(forward.limit == nil)
    }

    @Test func sortByAuthorBecomesAKeyBeforeTheToken() throws {
        var descriptor = HistoryDescriptor<DefaultHistoryTransaction>(sortBy: [.init(\.author, order: .reverse), .init(\.timestamp, order: .reverse)])
        var translated = try HistoryPredicateTranslator.request(for: descriptor)
        #expect(translated.sort == [HistorySortKey(.author, ascending: false)])
        #expect(translated.newestFirst)
        // A commit-order key settles the order: what follows it is dropped; storeIdentifier changes nothing.
        descriptor.sortBy = [.init(\.storeIdentifier), .init(\.token), .init(\.author)]
        translated = try HistoryPredicateTranslator.request(for: descriptor)
        #expect(translated.sort.isEmpty)
        #expect(!translated.newestFirst)
        descriptor.sortBy = [.init(\.author), .init(\.author, order: .reverse)]
        translated = try HistoryPredicateTranslator.request(for: descriptor)
        #expect(translated.sort == [HistorySortKey(.author)])
        #expect(!translated.newestFirst, "without a commit-order key, ties keep commit order")
        // A delete ignores the sort.
        #expect(try ModelContext.deleteHistoryRequest(descriptor).sort.isEmpty)
    }

    @Test func unsupportedConstructsThrowATypedError() throws {
        var byBundle = HistoryDescriptor<DefaultHistoryTransaction>()
        byBundle.sortBy = [.init(\.author), .init(\.bundleIdentifier)]
        #expect { try HistoryPredicateTranslator.request(for: byBundle) } throws: {
            ($0 as? PGModelError)?.code == .unsupportedHistoryQuery
        }
        #expect { try request(#Predicate { $0.storeIdentifier == "x" }) } throws: {
            ($0 as? PGModelError)?.code == .unsupportedHistoryQuery
        }
        #expect { try request(#Predicate { $0.changes.count > 2 }) } throws: {
            let error = $0 as? PGModelError
            return error?.code == .unsupportedHistoryQuery && error?.model == "DefaultHistoryTransaction"
        }
    }

    @Test func tokensAreCodableAndOrdered() throws {
        let data = try JSONEncoder().encode(saved)
        let decoded = try JSONDecoder().decode(DefaultHistoryToken.self, from: data)
        #expect(decoded == saved)
        #expect(DefaultHistoryToken(value: 3, storeIdentifier: "public") < decoded)
    }
}
