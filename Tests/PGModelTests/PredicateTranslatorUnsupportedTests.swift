import Foundation
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelCore
import Testing

class BaseRow: @unchecked Sendable {
    var name = ""
}

final class SubRow: BaseRow, @unchecked Sendable {
    var extra = 0
}

/// Asserts that translating `predicate` throws `unsupportedPredicate` with a message naming `construct` and the entity.
func expectUnsupported<Root>(
    _ predicate: Predicate<Root>, naming construct: String, entity: String = "Trip",
    translator: PredicateTranslator<Root>? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    let translator = translator ?? PredicateTranslator<Root>(entityName: entity, keyPathName: { _ in nil })
    let error = #expect(throws: PGModelError.self, sourceLocation: sourceLocation) { try translator.translate(predicate) }
    guard let error else { return }
    #expect(error.code == .unsupportedPredicate, sourceLocation: sourceLocation)
    #expect(error.message.contains(construct), "\(error.message)", sourceLocation: sourceLocation)
    #expect(error.message.contains("in a predicate on \(entity)"), "\(error.message)", sourceLocation: sourceLocation)
    #expect(error.model == entity, sourceLocation: sourceLocation)
}

@Suite("PredicateTranslator: unsupported constructs throw")
struct PredicateTranslatorUnsupportedTests {
    func expectUnsupported(_ predicate: Predicate<TripRow>, naming construct: String,
                           sourceLocation: SourceLocation = #_sourceLocation) {
        PGModelTests.expectUnsupported(predicate, naming: construct, translator: tripTranslator,
                                       sourceLocation: sourceLocation)
    }

    @Test func closuresOverCollections() {
        expectUnsupported(#Predicate { $0.tags.contains { $0 == "a" } },
                          naming: "`PredicateExpressions.SequenceContainsWhere`")
        expectUnsupported(#Predicate { $0.tags.allSatisfy { $0 == "a" } },
                          naming: "`PredicateExpressions.SequenceAllSatisfy`")
        expectUnsupported(#Predicate { $0.tags.filter { $0 == "a" }.isEmpty },
                          naming: "`PredicateExpressions.Filter`")
    }

    @Test func optionalChainingAndUnwrapping() {
        expectUnsupported(#Predicate { $0.album?.title == "x" }, naming: "`PredicateExpressions.OptionalFlatMap`")
        expectUnsupported(#Predicate { $0.album.flatMap { $0.title } == "x" },
                          naming: "`PredicateExpressions.OptionalFlatMap`")
        expectUnsupported(#Predicate { $0.genre! == "x" }, naming: "`PredicateExpressions.ForcedUnwrap`")
    }

    @Test func collectionOperationsOnAttributes() {
        // This schema's `tags` is not stored: subscripts and folds of stored arrays translate (ArrayPredicateTests).
        expectUnsupported(#Predicate { $0.tags.contains("a") }, naming: "`PredicateExpressions.SequenceContains`")
        expectUnsupported(#Predicate { $0.tags.contains(["a"]) },
                          naming: "`PredicateExpressions.CollectionContainsCollection`")
        expectUnsupported(#Predicate { $0.tags.starts(with: ["a"]) },
                          naming: "`PredicateExpressions.SequenceStartsWith`")
        expectUnsupported(#Predicate { $0.tags[0] == "a" }, naming: "TripRow.tags")
        expectUnsupported(#Predicate { $0.tags.max() == "a" }, naming: "TripRow.tags")
        expectUnsupported(#Predicate { $0.tags.min() == "a" }, naming: "TripRow.tags")
    }

    @Test func keyPathsThatAreNotStoredAttributes() {
        expectUnsupported(#Predicate { $0.tags.isEmpty }, naming: "TripRow.tags")
        expectUnsupported(#Predicate { $0.album == nil }, naming: "TripRow.album")
        expectUnsupported(#Predicate { $0.nameLength > 3 }, naming: "TripRow")
        // A property of an attribute (a computed `String.count`, `Date.timeIntervalSince1970`).
        expectUnsupported(#Predicate { $0.name.count > 3 }, naming: "a key path from String to Int")
        expectUnsupported(#Predicate { $0.startDate.timeIntervalSince1970 > 3 }, naming: "Date")
    }

    @Test func capturedValuesOfUnstorableTypes() throws {
        let big = UInt64.max
        expectUnsupported(#Predicate { $0.u64 == big }, naming: "UInt64")
        // Messages never carry bound values.
        let error = #expect(throws: PGModelError.self) { try ir(#Predicate { $0.u64 == big }) }
        #expect(error?.message.contains("\(big)") == false)
    }

    @Test func errorsCarryTheKeyPathWithoutAddresses() throws {
        let named = #expect(throws: PGModelError.self) { try ir(#Predicate { $0.tags.isEmpty }) }
        #expect(named?.keyPath == "\\TripRow.tags")
        let computed = #expect(throws: PGModelError.self) { try ir(#Predicate { $0.nameLength > 1 }) }
        #expect(computed?.keyPath == nil)
        #expect(computed?.message.contains("a key path from TripRow to Int") == true, "\(computed?.message ?? "")")
        #expect(computed?.message.contains("0x") == false, "\(computed?.message ?? "")")
    }

    @Test func comparingModelsThemselves() {
        let row = TripRow()
        expectUnsupported(#Predicate { $0 == row }, naming: "`PredicateExpressions.Variable`")
    }

    @Test func regularExpressions() {
        expectUnsupported(#Predicate { $0.name.contains(/a+/) }, naming: "`PredicateExpressions.StringContainsRegex`")
    }

    @Test func typeChecksAndCasts() {
        let translator = PredicateTranslator<BaseRow>(entityName: "Base", keyPathName: { $0 == \BaseRow.name ? "name" : nil })
        PGModelTests.expectUnsupported(#Predicate<BaseRow> { $0 is SubRow }, naming: "`PredicateExpressions.TypeCheck`",
                                       entity: "Base", translator: translator)
        PGModelTests.expectUnsupported(#Predicate<BaseRow> { ($0 as! SubRow).extra == 1 },
                                       naming: "`PredicateExpressions.ForceCast`", entity: "Base", translator: translator)
        PGModelTests.expectUnsupported(#Predicate<BaseRow> { ($0 as? SubRow)?.extra == 1 },
                                       naming: "`PredicateExpressions.OptionalFlatMap`", entity: "Base",
                                       translator: translator)
    }

    @Test func unsupportedPartsAnywhereInTheTreeThrow() {
        // Constant folding must not hide an untranslatable branch.
        let on = true
        expectUnsupported(#Predicate { on ? true : $0.tags.contains { $0 == "a" } },
                          naming: "`PredicateExpressions.SequenceContainsWhere`")
        expectUnsupported(#Predicate { on || $0.tags.contains { $0 == "a" } },
                          naming: "`PredicateExpressions.SequenceContainsWhere`")
        expectUnsupported(#Predicate { $0.isFavorite && !($0.genre! == "x") },
                          naming: "`PredicateExpressions.ForcedUnwrap`")
    }
}
