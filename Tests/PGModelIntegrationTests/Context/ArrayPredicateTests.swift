import Foundation
@_spi(PGModelInternals) import PGModel
import PGModelTesting
import Testing

@Model final class ScoreCard {
    var player: String
    var scores: [Int]
    var tags: [String]

    init(player: String, scores: [Int], tags: [String]) {
        self.player = player
        self.scores = scores
        self.tags = tags
    }
}

/// `#Predicate` over array attributes: an element by index, `min()` and `max()`, in PostgreSQL, selecting
/// what `Predicate.evaluate` selects (a subscript past the end selects nothing instead of trapping).
@Suite("Array predicates: subscripts, min() and max()")
struct ArrayPredicateTests {
    @Test(arguments: StoreKind.tested)
    func subscriptsMinAndMax(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [ScoreCard.self])
        let token = f.token
        try await offCooperativePool {
            let writer = f.newContext()
            let cards = [
                ScoreCard(player: "\(token)-a", scores: [3, 9, 4], tags: ["red", "blue"]),
                ScoreCard(player: "\(token)-b", scores: [7], tags: ["blue"]),
                ScoreCard(player: "\(token)-c", scores: [], tags: []),
                ScoreCard(player: "\(token)-d", scores: [1, 2], tags: ["green", "red", "blue"]),
            ]
            cards.forEach(writer.insert)
            try writer.save()

            let reader = f.newContext()
            func players(_ predicate: Predicate<ScoreCard>) throws -> [String] {
                let mine = #Predicate<ScoreCard> { $0.player.starts(with: token) }
                let rows = try reader.fetch(FetchDescriptor(predicate: mine, sortBy: [SortDescriptor(\.player)]))
                let fetched = try reader.fetch(FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.player)]))
                    .filter { $0.player.hasPrefix(token) }.map(\.player)
                // What Swift selects from the same rows, skipping those where a subscript would trap.
                let expected = rows.filter { (try? predicate.evaluate($0)) == true }.map(\.player)
                #expect(fetched == expected)
                return fetched.map { String($0.suffix(1)) }
            }
            let index = 1
            #expect(try players(#Predicate { $0.tags.count > 0 && $0.tags[0] == "red" }) == ["a"])
            #expect(try players(#Predicate { $0.scores.count > index && $0.scores[index] > 1 }) == ["a", "d"])
            #expect(try players(#Predicate { ($0.scores.max() ?? 0) > 5 }) == ["a", "b"])
            #expect(try players(#Predicate { ($0.scores.min() ?? 100) < 3 }) == ["d"])
            #expect(try players(#Predicate { $0.scores.max() == nil }) == ["c"])
            #expect(try players(#Predicate { $0.tags.min() == "blue" }) == ["a", "b", "d"])
        }
    }

    @Test("a subscript past the end selects nothing in PostgreSQL (Swift would trap)", arguments: StoreKind.tested)
    func subscriptPastTheEnd(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, [ScoreCard.self])
        let token = f.token
        try await offCooperativePool {
            let writer = f.newContext()
            writer.insert(ScoreCard(player: "\(token)-short", scores: [1], tags: []))
            try writer.save()
            let far = 5
            let found = try f.newContext().fetch(FetchDescriptor(predicate: #Predicate<ScoreCard> {
                $0.player == "\(token)-short" && $0.scores[far] == 1
            }))
            #expect(found.isEmpty)
            let negative = -1
            let error = #expect(throws: PGModelError.self) {
                _ = try f.newContext().fetch(FetchDescriptor(predicate: #Predicate<ScoreCard> { $0.scores[negative] == 1 }))
            }
            #expect(error?.code == .invalidField)
        }
    }
}
