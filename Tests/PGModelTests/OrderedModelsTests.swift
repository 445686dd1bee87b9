import Foundation
import Testing
@_spi(PGModelInternals) @testable import PGModel

/// A context's pending inserts, changes and deletes keep their order through removals, and removing many
/// one by one stays linear.
@Suite("OrderedModels")
struct OrderedModelsTests {
    static func titles(_ ordered: OrderedModels) -> [String] {
        ordered.models.compactMap { ($0 as? Album)?.title }
    }

    @Test func removalsKeepTheOrderOfTheRest() {
        let albums = (0..<100).map { Album(title: "a\($0)") }
        var ordered = OrderedModels()
        for album in albums { ordered.add(album, id: album._$backingData.id) }
        // Adding again changes nothing.
        ordered.add(albums[3], id: albums[3]._$backingData.id)
        #expect(Self.titles(ordered) == (0..<100).map { "a\($0)" })
        // Past 32 removals and an eighth of the models the storage is compacted; before, the removed are skipped.
        let gone = Set([0, 5, 99] + Array(40..<80))
        for i in gone.sorted() { ordered.remove(albums[i]._$backingData.id) }
        ordered.remove(UUID())
        #expect(Self.titles(ordered) == (0..<100).filter { !gone.contains($0) }.map { "a\($0)" })
        // A removed model added again comes last; removing it again removes only it.
        ordered.add(albums[5], id: albums[5]._$backingData.id)
        #expect(Self.titles(ordered).last == "a5")
        ordered.remove(albums[5]._$backingData.id)
        ordered.remove(albums[1]._$backingData.id)
        #expect(Self.titles(ordered) == (0..<100).filter { !gone.contains($0) && $0 != 1 }.map { "a\($0)" })
        #expect(!ordered.isEmpty)
        for i in 0..<100 { ordered.remove(albums[i]._$backingData.id) }
        #expect(ordered.isEmpty && ordered.models.isEmpty)
    }

    /// Each removal used to renumber every later model: quadratic in the count.
    @Test func removingEveryOneOfManyInOrderLeavesNone() {
        let albums = (0..<20_000).map { Album(title: "a\($0)") }
        var ordered = OrderedModels()
        for album in albums { ordered.add(album, id: album._$backingData.id) }
        for (i, album) in albums.enumerated() {
            ordered.remove(album._$backingData.id)
            if i == 10_000 { #expect(ordered.models.count == 9_999) }
        }
        #expect(ordered.isEmpty && ordered.models.isEmpty)
    }
}
