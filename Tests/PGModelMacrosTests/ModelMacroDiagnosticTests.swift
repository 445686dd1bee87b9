import PGModelMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import SwiftSyntaxMacrosTestSupport
import XCTest

/// One test per diagnostic `@Model` emits. Invalid properties are left as written and out of the
/// generated members, so the only errors a user sees are these.
final class ModelMacroDiagnosticTests: XCTestCase {
    private let supported = "Supported types are String, Bool, Int, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, "
        + "Double, Float, Decimal, Date, UUID, Data, URL, enums with String or Int raw values, "
        + "Optional of each, other @Model classes (a to-one relationship), and arrays of them (a to-many relationship)."

    /// A model with one bad member line: the member stays as written and nothing is generated for it.
    private func assertRejected(
        _ member: String,
        diagnostics: [DiagnosticSpec],
        fixedMember: String? = nil,
        file: StaticString = #filePath,
        line: UInt = #line
    ) {
        assertMacroExpansion(
            """
            @Model final class Trip {
                \(member)
            }
            """,
            expandedSource: """
            final class Trip {
                \(member)

            \(generatedMembers("Trip", []))
            }

            extension Trip: PGModel.PersistentModel {
            }

            extension Trip: Observation.Observable {
            }
            """,
            diagnostics: diagnostics,
            macroSpecs: modelMacroSpecs,
            fixedSource: fixedMember.map { """
                @Model final class Trip {
                    \($0)
                }
                """ },
            file: file,
            line: line
        )
    }

    private func unsupported(_ property: String, _ type: String, _ reason: String, column: Int, fixIt: String? = nil) -> DiagnosticSpec {
        DiagnosticSpec(
            message: "Property '\(property)' of @Model class 'Trip' has type '\(type)', which PGModel cannot store: \(reason). \(supported)",
            line: 2, column: column,
            fixIts: fixIt.map { [FixItSpec(message: $0)] } ?? []
        )
    }

    // MARK: Not a class

    func testStructIsRejectedWithFixIt() {
        assertMacroExpansion(
            """
            @Model struct Trip {
                var name: String
            }
            """,
            expandedSource: """
            struct Trip {
                var name: String
            }
            """,
            diagnostics: [DiagnosticSpec(
                message: "@Model can only be applied to a class; SwiftData models are reference types, and this is a struct.",
                line: 1, column: 1,
                fixIts: [FixItSpec(message: "Replace 'struct' with 'final class'")]
            )],
            macroSpecs: modelMacroSpecs,
            fixedSource: """
            @Model final class Trip {
                var name: String
            }
            """
        )
    }

    func testEnumIsRejected() {
        assertMacroExpansion(
            """
            @Model enum Trip {
                case day
            }
            """,
            expandedSource: """
            enum Trip {
                case day
            }
            """,
            diagnostics: [DiagnosticSpec(
                message: "@Model can only be applied to a class; SwiftData models are reference types, and this is an enum.",
                line: 1, column: 1
            )],
            macroSpecs: modelMacroSpecs
        )
    }

    func testActorIsRejected() {
        assertMacroExpansion(
            """
            @Model actor Trip {
                var name = ""
            }
            """,
            expandedSource: """
            actor Trip {
                var name = ""
            }
            """,
            diagnostics: [DiagnosticSpec(
                message: "@Model can only be applied to a class; SwiftData models are reference types, and this is an actor.",
                line: 1, column: 1
            )],
            macroSpecs: modelMacroSpecs
        )
    }

    func testProtocolIsRejected() {
        assertMacroExpansion(
            """
            @Model protocol Trip {
                var name: String { get }
            }
            """,
            expandedSource: """
            protocol Trip {
                var name: String { get }
            }
            """,
            diagnostics: [DiagnosticSpec(
                message: "@Model can only be applied to a class; SwiftData models are reference types, and this is a protocol.",
                line: 1, column: 1
            )],
            macroSpecs: modelMacroSpecs
        )
    }

    // MARK: Stored properties

    func testMissingTypeWithLiteralOffersAnnotation() {
        assertRejected(
            "var rating = 5",
            diagnostics: [DiagnosticSpec(
                message: "Property 'rating' of @Model class 'Trip' needs an explicit type, e.g. `var rating: Int = 5`.",
                line: 2, column: 9,
                fixIts: [FixItSpec(message: "Add ': Int'")]
            )],
            fixedMember: "var rating: Int = 5"
        )
    }

    func testMissingTypeWithInitializerCallOffersAnnotation() {
        assertRejected(
            "var start = Date()",
            diagnostics: [DiagnosticSpec(
                message: "Property 'start' of @Model class 'Trip' needs an explicit type, e.g. `var start: Date = Date()`.",
                line: 2, column: 9,
                fixIts: [FixItSpec(message: "Add ': Date'")]
            )],
            fixedMember: "var start: Date = Date()"
        )
    }

    func testMissingTypeWithUnclearInitializer() {
        assertRejected(
            "var start = makeStart()",
            diagnostics: [DiagnosticSpec(
                message: "Property 'start' of @Model class 'Trip' needs an explicit type, e.g. `var start: Int = 0`.",
                line: 2, column: 9
            )]
        )
    }

    func testLetIsRejectedWithFixIt() {
        assertRejected(
            "let name: String",
            diagnostics: [DiagnosticSpec(
                message: "Property 'name' of @Model class 'Trip' is a `let`; PGModel sets stored properties when it fetches or rolls back a model, so declare it with `var`.",
                line: 2, column: 5,
                fixIts: [FixItSpec(message: "Replace 'let' with 'var'")]
            )],
            fixedMember: "var name: String"
        )
    }

    func testObserversAreRejectedWithFixIt() {
        assertRejected(
            #"var name: String = "" { didSet { print(name) } }"#,
            diagnostics: [DiagnosticSpec(
                message: "Property 'name' of @Model class 'Trip' has willSet/didSet observers, which PGModel's generated accessors replace; observe the model with Observation (withObservationTracking) instead.",
                line: 2, column: 27,
                fixIts: [FixItSpec(message: "Remove the observers")]
            )],
            fixedMember: #"var name: String = """#
        )
    }

    func testLazyIsRejectedWithFixIt() {
        assertRejected(
            "lazy var count: Int = 0",
            diagnostics: [DiagnosticSpec(
                message: "Property 'count' of @Model class 'Trip' is `lazy`; PGModel loads stored properties from the store, so remove `lazy`, or mark the property @Transient if it should not be stored.",
                line: 2, column: 5,
                fixIts: [FixItSpec(message: "Remove 'lazy'")]
            )],
            fixedMember: "var count: Int = 0"
        )
    }

    func testTransientWithoutDefault() {
        assertRejected(
            "@Transient var cache: Int",
            diagnostics: [DiagnosticSpec(
                message: "PGModel creates fetched instances without calling your initializer, so @Transient property 'cache' needs a default value.",
                line: 2, column: 20
            )]
        )
    }

    func testTransientLetWithoutDefault() {
        assertRejected(
            "@Transient let cache: Int?",
            diagnostics: [DiagnosticSpec(
                message: "PGModel creates fetched instances without calling your initializer, so @Transient property 'cache' needs a default value.",
                line: 2, column: 20
            )]
        )
    }

    func testUnderscoredWithoutDefault() {
        assertRejected(
            "private var _cache: Int",
            diagnostics: [DiagnosticSpec(
                message: "PGModel does not store property '_cache' because its name starts with '_', and it creates fetched instances without calling your initializer, so '_cache' needs a default value.",
                line: 2, column: 17
            )]
        )
    }

    func testSeveralPropertiesInOneDeclaration() {
        assertRejected(
            "var latitude: Double, longitude: Double",
            diagnostics: [DiagnosticSpec(
                message: "@Model class 'Trip' declares several stored properties ('latitude', 'longitude') in one declaration; declare each with its own `var` so PGModel can generate its accessors.",
                line: 2, column: 5
            )]
        )
    }

    // MARK: Types

    func testUIntIsRejectedWithFixIt() {
        assertRejected(
            "var count: UInt",
            diagnostics: [unsupported("count", "UInt", "PostgreSQL has no unsigned 64-bit integer type; use Int (or UInt32 when the values fit)", column: 16, fixIt: "Use 'Int'")],
            fixedMember: "var count: Int"
        )
    }

    func testOptionalUInt64IsRejectedWithFixIt() {
        assertRejected(
            "var count: UInt64?",
            diagnostics: [unsupported("count", "UInt64?", "PostgreSQL has no unsigned 64-bit integer type; use Int64 (or UInt32 when the values fit)", column: 16, fixIt: "Use 'Int64'")],
            fixedMember: "var count: Int64?"
        )
    }

    func testCharacterIsRejectedWithFixIt() {
        assertRejected(
            "var initial: Swift.Character",
            diagnostics: [unsupported("initial", "Swift.Character", "a Character is stored as a String", column: 18, fixIt: "Use 'String'")],
            fixedMember: "var initial: String"
        )
    }

    func testTupleIsRejected() {
        assertRejected(
            "var location: (Double, Double)",
            diagnostics: [unsupported("location", "(Double, Double)", "tuples have no column type; store each element in its own property", column: 19)]
        )
    }

    func testFunctionIsRejected() {
        assertRejected(
            "var action: (@Sendable () -> Void)?",
            diagnostics: [unsupported("action", "(@Sendable () -> Void)?", "functions and closures cannot be stored", column: 17)]
        )
    }

    func testDictionaryIsRejected() {
        assertRejected(
            "var scores: [String: Int]",
            diagnostics: [unsupported("scores", "[String: Int]", "dictionaries have no column type", column: 17)]
        )
    }

    func testAnyIsRejected() {
        assertRejected(
            "var payload: Any",
            diagnostics: [unsupported("payload", "Any", "'Any' does not name one concrete type to store", column: 18)]
        )
    }

    func testExistentialIsRejected() {
        assertRejected(
            "var payload: any Codable",
            diagnostics: [unsupported("payload", "any Codable", "'any' types do not name one concrete type to store", column: 18)]
        )
    }

    func testImplicitlyUnwrappedOptionalIsRejectedWithFixIt() {
        assertRejected(
            "var note: String!",
            diagnostics: [unsupported("note", "String!", "implicitly unwrapped optionals are not stored; declare it as an Optional with '?'", column: 15, fixIt: "Use 'String?'")],
            fixedMember: "var note: String?"
        )
    }

    func testNestedOptionalIsRejected() {
        assertRejected(
            "var note: String??",
            diagnostics: [unsupported("note", "String??", "nested optionals cannot be told apart from nil in a nullable column", column: 15)]
        )
    }

    func testSetIsRejectedWithFixIt() {
        assertRejected(
            "var tags: Set<Tag>?",
            diagnostics: [unsupported("tags", "Set<Tag>?", "sets are not stored; declare a to-many relationship as an array of models", column: 15, fixIt: "Use '[Tag]'")],
            fixedMember: "var tags: [Tag]?"
        )
    }

    func testContiguousArrayIsRejectedWithFixIt() {
        assertRejected(
            "var tracks: ContiguousArray<Track>",
            diagnostics: [unsupported("tracks", "ContiguousArray<Track>", "to-many relationships are stored as arrays; declare it as an Array", column: 17, fixIt: "Use '[Track]'")],
            fixedMember: "var tracks: [Track]"
        )
    }

    func testWeakReferenceIsRejected() {
        assertRejected(
            "weak var accommodation: LivingAccommodation?",
            diagnostics: [DiagnosticSpec(
                message: "Property 'accommodation' of @Model class 'Trip' is a `weak` reference; PGModel keeps related models alive through their context and keeps inverses in step itself, so declare the relationship as a plain `var` (an Optional for to-one, an array for to-many).",
                line: 2, column: 5
            )]
        )
    }

    func testUnownedReferenceIsRejected() {
        assertRejected(
            "unowned var owner: User",
            diagnostics: [DiagnosticSpec(
                message: "Property 'owner' of @Model class 'Trip' is a `unowned` reference; PGModel keeps related models alive through their context and keeps inverses in step itself, so declare the relationship as a plain `var` (an Optional for to-one, an array for to-many).",
                line: 2, column: 5
            )]
        )
    }

    // MARK: @Relationship

    func testRelationshipAndAttributeOnOneProperty() {
        assertRejected(
            "@Attribute(.unique) @Relationship(deleteRule: .cascade) var album: Album?",
            diagnostics: [DiagnosticSpec(
                message: "Property 'album' of @Model class 'Trip' has both @Attribute and @Relationship; a property is either an attribute or a relationship to other models, so keep only the one that describes it.",
                line: 2, column: 25
            )]
        )
    }

    func testRelationshipOnLetIsRejectedWithFixIt() {
        assertRejected(
            "@Relationship(inverse: \\Album.tracks) let album: Album?",
            diagnostics: [DiagnosticSpec(
                message: "Relationship 'album' of @Model class 'Trip' is a `let`; PGModel sets relationships when it fetches a model and when it keeps an inverse relationship in step, so declare it with `var`.",
                line: 2, column: 43,
                fixIts: [FixItSpec(message: "Replace 'let' with 'var'")]
            )],
            fixedMember: "@Relationship(inverse: \\Album.tracks) var album: Album?"
        )
    }

    func testRelationshipOnTransientProperty() {
        assertRejected(
            "@Transient @Relationship var album: Album? = nil",
            diagnostics: [DiagnosticSpec(
                message: "Property 'album' of @Model class 'Trip' has both @Transient and @Relationship; a @Transient property is not stored, so it cannot be a relationship. Remove one of them.",
                line: 2, column: 16
            )]
        )
    }

    // MARK: #Unique and #Index

    func testConstraintKeyPathThroughAnotherValue() {
        assertMacroExpansion(
            #"""
            @Model final class Trip {
                #Unique<Trip>([\.name, \.destination.count])
                var name: String
                var destination: String
                init() { name = ""; destination = "" }
            }
            """#,
            expandedSource: """
            final class Trip {
            \(persisted("name", "String"))
            \(persisted("destination", "String"))
                init() { name = ""; destination = "" }

            \(generatedMembers("Trip", [("name", "String", nil), ("destination", "String", nil)], uniqueness: #"[["name"]]"#))
            }

            extension Trip: PGModel.PersistentModel {
            }

            extension Trip: Observation.Observable {
            }
            """,
            diagnostics: [DiagnosticSpec(
                message: #"#Unique key path '\.destination.count' must name one stored property of 'Trip' directly, like `\.name`; key paths through other values are not supported."#,
                line: 2, column: 28
            )],
            macroSpecs: modelMacroSpecs
        )
    }

    func testConstraintEmptyGroup() {
        assertMacroExpansion(
            #"""
            @Model final class Trip {
                #Index<Trip>([], [\.name])
                var name: String
                init() { name = "" }
            }
            """#,
            expandedSource: """
            final class Trip {
            \(persisted("name", "String"))
                init() { name = "" }

            \(generatedMembers("Trip", [("name", "String", nil)], indexes: #"[.binary(["name"])]"#))
            }

            extension Trip: PGModel.PersistentModel {
            }

            extension Trip: Observation.Observable {
            }
            """,
            diagnostics: [DiagnosticSpec(
                message: "An empty group in #Index constrains nothing; list at least one key path in each group.",
                line: 2, column: 18
            )],
            macroSpecs: modelMacroSpecs
        )
    }

    func testConstraintOnTransientProperty() {
        assertMacroExpansion(
            #"""
            @Model final class Trip {
                #Unique<Trip>([\.cache])
                var name: String
                @Transient var cache = 0
                init() { name = "" }
            }
            """#,
            expandedSource: """
            final class Trip {
            \(persisted("name", "String"))
                @Transient var cache = 0
                init() { name = "" }

            \(generatedMembers("Trip", [("name", "String", nil)], uniqueness: "[]"))
            }

            extension Trip: PGModel.PersistentModel {
            }

            extension Trip: Observation.Observable {
            }
            """,
            diagnostics: [DiagnosticSpec(
                message: "#Unique names 'cache', which is not a stored property that PGModel persists for 'Trip'; list only stored properties that are not @Transient.",
                line: 2, column: 20
            )],
            macroSpecs: modelMacroSpecs
        )
    }

    func testConstraintArgumentThatIsNotAnArrayOfKeyPaths() {
        assertMacroExpansion(
            #"""
            @Model final class Trip {
                #Index<Trip>(\.name)
                var name: String
                init() { name = "" }
            }
            """#,
            expandedSource: """
            final class Trip {
            \(persisted("name", "String"))
                init() { name = "" }

            \(generatedMembers("Trip", [("name", "String", nil)], indexes: "[]"))
            }

            extension Trip: PGModel.PersistentModel {
            }

            extension Trip: Observation.Observable {
            }
            """,
            diagnostics: [DiagnosticSpec(
                message: #"#Index takes array literals of key paths, e.g. `#Index<Trip>([\.name], [\.name, \.startDate])`, or index kinds, e.g. `#Index<Trip>(.binary([\.name]), .rtree([\.latitude, \.longitude]))`."#,
                line: 2, column: 18
            )],
            macroSpecs: modelMacroSpecs
        )
    }

    func testConstraintOutsideAClass() {
        assertMacroExpansion(
            #"""
            struct Settings {
                #Unique<Trip>([\.name])
            }
            """#,
            expandedSource: """
            struct Settings {
            }
            """,
            diagnostics: [DiagnosticSpec(
                message: "#Unique can only be written inside the body of a @Model class.",
                line: 2, column: 5
            )],
            macroSpecs: modelMacroSpecs
        )
    }
}
