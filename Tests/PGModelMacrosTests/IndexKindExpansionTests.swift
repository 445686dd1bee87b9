import PGModelMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import SwiftSyntaxMacrosTestSupport
import XCTest

/// `#Index` with index kinds, SwiftData's `#Index<Trip>(.binary([\.name]), .rtree([\.latitude, \.longitude]))`:
/// `@Model` records each group with its kind, and refuses an `.rtree` over a property whose written type
/// an R-tree cannot order.
final class IndexKindExpansionTests: XCTestCase {
    private let coordinates: [PropertySpec] = [("name", "String", nil), ("latitude", "Double", nil), ("longitude", "Double?", nil)]

    /// A model with `name`, `latitude` and `longitude` and the given `#Index` line.
    private func assertCoordinates(
        _ index: String, indexes: String, diagnostics: [DiagnosticSpec] = [],
        file: StaticString = #filePath, line: UInt = #line
    ) {
        assertMacroExpansion(
            """
            @Model final class Trip {
                \(index)
                var name: String
                var latitude: Double
                var longitude: Double?
                init() { name = ""; latitude = 0 }
            }
            """,
            expandedSource: """
            final class Trip {
            \(persisted("name", "String"))
            \(persisted("latitude", "Double"))
            \(persisted("longitude", "Double?"))
                init() { name = ""; latitude = 0 }

            \(generatedMembers("Trip", coordinates, indexes: indexes))
            }

            extension Trip: PGModel.PersistentModel {
            }

            extension Trip: Observation.Observable {
            }
            """,
            diagnostics: diagnostics,
            macroSpecs: modelMacroSpecs,
            file: file,
            line: line
        )
    }

    func testBinaryAndRTreeKindsKeepTheirOrderBesideKeyPathArrays() {
        assertMacroExpansion(
            #"""
            @Model final class Trip {
                #Index<Trip>(.binary([\.name]), .rtree([\.latitude, \.longitude]))
                #Index<Trip>([\.startDate], [\.name, \.startDate])
                var name: String
                var latitude: Double
                var longitude: Double
                var startDate: Date
                init() { name = ""; latitude = 0; longitude = 0; startDate = .now }
            }
            """#,
            expandedSource: """
            final class Trip {
            \(persisted("name", "String"))
            \(persisted("latitude", "Double"))
            \(persisted("longitude", "Double"))
            \(persisted("startDate", "Date"))
                init() { name = ""; latitude = 0; longitude = 0; startDate = .now }

            \(generatedMembers("Trip", [("name", "String", nil), ("latitude", "Double", nil), ("longitude", "Double", nil), ("startDate", "Date", nil)],
                               indexes: #"[.binary(["name"]), .rtree(["latitude", "longitude"]), .binary(["startDate"]), .binary(["name", "startDate"])]"#))
            }

            extension Trip: PGModel.PersistentModel {
            }

            extension Trip: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testQualifiedKindsAndOptionalNumbers() {
        assertCoordinates(
            #"#Index<Trip>(Schema.Index<Trip>.Types<Trip>.rtree([\Trip.latitude, \.longitude]), Schema.Index<Trip>.Types<Trip>.binary([\.name]))"#,
            indexes: #"[.rtree(["latitude", "longitude"]), .binary(["name"])]"#
        )
    }

    func testRTreeOverAStringIsRefusedAndTheRestOfTheGroupKept() {
        assertCoordinates(
            #"#Index<Trip>(.rtree([\.name, \.latitude]))"#,
            indexes: #"[.rtree(["latitude"])]"#,
            diagnostics: [DiagnosticSpec(
                message: #"#Index .rtree cannot cover 'name' of 'Trip', which is a String: an R-tree index (a PostgreSQL GiST index) covers numeric and Date properties only. Index it with .binary([\.name]) instead."#,
                line: 2, column: 26
            )]
        )
    }

    func testRTreeOverBooleansArraysAndRelationshipsIsRefused() {
        assertMacroExpansion(
            #"""
            @Model final class Trip {
                #Index<Trip>(.rtree([\.isOpen]), .rtree([\.scores]), .rtree([\.owner]), .rtree([\.rank]))
                var isOpen: Bool?
                var scores: [Int]
                @Relationship
                var owner: Person?
                var rank: Rank
                init() { isOpen = nil; scores = []; rank = .low }
            }
            """#,
            expandedSource: """
            final class Trip {
            \(persisted("isOpen", "Bool?"))
            \(persisted("scores", "[Int]"))
            \(persisted("owner", "Person?", attributes: ["@Relationship"]))
            \(persisted("rank", "Rank"))
                init() { isOpen = nil; scores = []; rank = .low }

            \(generatedMembers("Trip", [("isOpen", "Bool?", nil), ("scores", "[Int]", nil), ("owner", "Person?", relationship("")), ("rank", "Rank", nil)],
                               indexes: #"[.rtree(["rank"])]"#))
            }

            extension Trip: PGModel.PersistentModel {
            }

            extension Trip: Observation.Observable {
            }
            """,
            diagnostics: [
                DiagnosticSpec(
                    message: #"#Index .rtree cannot cover 'isOpen' of 'Trip', which is a Bool: an R-tree index (a PostgreSQL GiST index) covers numeric and Date properties only. Index it with .binary([\.isOpen]) instead."#,
                    line: 2, column: 26
                ),
                DiagnosticSpec(
                    message: #"#Index .rtree cannot cover 'scores' of 'Trip', which is an array: an R-tree index (a PostgreSQL GiST index) covers numeric and Date properties only. Index it with .binary([\.scores]) instead."#,
                    line: 2, column: 46
                ),
                DiagnosticSpec(
                    message: #"#Index .rtree cannot cover 'owner' of 'Trip', which is a relationship: an R-tree index (a PostgreSQL GiST index) covers numeric and Date properties only. Index it with .binary([\.owner]) instead."#,
                    line: 2, column: 66
                ),
            ],
            macroSpecs: modelMacroSpecs
        )
    }

    func testAnUnknownKindIsRefused() {
        assertCoordinates(
            #"#Index<Trip>(.hash([\.name]), .rtree([\.latitude]))"#,
            indexes: #"[.rtree(["latitude"])]"#,
            diagnostics: [DiagnosticSpec(
                message: #"#Index takes array literals of key paths, e.g. `#Index<Trip>([\.name], [\.name, \.startDate])`, or index kinds, e.g. `#Index<Trip>(.binary([\.name]), .rtree([\.latitude, \.longitude]))`."#,
                line: 2, column: 18
            )]
        )
    }

    func testUniqueTakesNoKinds() {
        assertMacroExpansion(
            #"""
            @Model final class Trip {
                #Unique<Trip>(.binary([\.name]))
                var name: String
                init() { name = "" }
            }
            """#,
            expandedSource: """
            final class Trip {
            \(persisted("name", "String"))
                init() { name = "" }

            \(generatedMembers("Trip", [("name", "String", nil)], uniqueness: "[]"))
            }

            extension Trip: PGModel.PersistentModel {
            }

            extension Trip: Observation.Observable {
            }
            """,
            diagnostics: [DiagnosticSpec(
                message: #"#Unique takes array literals of key paths, e.g. `#Unique<Trip>([\.name], [\.name, \.startDate])`."#,
                line: 2, column: 19
            )],
            macroSpecs: modelMacroSpecs
        )
    }
}
