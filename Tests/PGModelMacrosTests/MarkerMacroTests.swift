import PGModelMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosTestSupport
import XCTest

/// The macros that expand to nothing by themselves: `@Model` reads them.
final class MarkerMacroTests: XCTestCase {
    private let markers: [String: MacroSpec] = [
        "Attribute": MacroSpec(type: AttributeMacro.self),
        "Relationship": MacroSpec(type: RelationshipMacro.self),
        "Transient": MacroSpec(type: TransientMacro.self),
        "Unique": MacroSpec(type: UniqueMacro.self),
        "Index": MacroSpec(type: IndexMacro.self),
    ]

    func testAttributeExpandsToNothing() {
        assertMacroExpansion(
            """
            @Attribute(.unique, originalName: "title") var name: String
            """,
            expandedSource: """
            var name: String
            """,
            macroSpecs: markers
        )
    }

    func testRelationshipExpandsToNothing() {
        assertMacroExpansion(
            #"""
            @Relationship(.unique, deleteRule: .cascade, inverse: \Album.tracks) var album: Album?
            """#,
            expandedSource: """
            var album: Album?
            """,
            macroSpecs: markers
        )
    }

    func testTransientExpandsToNothing() {
        assertMacroExpansion(
            """
            @Transient var cache = 0
            """,
            expandedSource: """
            var cache = 0
            """,
            macroSpecs: markers
        )
    }

    func testUniqueAndIndexExpandToNothingInsideAClass() {
        assertMacroExpansion(
            #"""
            final class Trip {
                #Unique<Trip>([\.name])
                #Index<Trip>([\.name], [\.startDate])
                var name = ""
            }
            """#,
            expandedSource: """
            final class Trip {
                var name = ""
            }
            """,
            macroSpecs: markers
        )
    }

    func testPersistedPropertyLeavesUnsuitableDeclarationsAlone() {
        // `@Model` only applies it to typed single `var`s; written by hand elsewhere it does nothing.
        assertMacroExpansion(
            """
            @_PersistedProperty let name: String
            @_PersistedProperty var count = 0
            """,
            expandedSource: """
            let name: String
            var count = 0
            """,
            macroSpecs: ["_PersistedProperty": MacroSpec(type: PersistedPropertyMacro.self)]
        )
    }
}
