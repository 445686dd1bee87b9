import PGModelMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosTestSupport
import XCTest

/// `@Model` on class hierarchies: a non-final root gets overridable `class var`s, a subclass overrides
/// them and chains `init(backingData:)` to its superclass, and a final class keeps its static shape.
final class InheritanceExpansionTests: XCTestCase {
    /// A subclass already conforms through its superclass, so the compiler passes no protocols.
    private let subclassSpecs = modelMacroSpecs.merging(
        ["Model": MacroSpec(type: ModelMacro.self, conformances: [])], uniquingKeysWith: { $1 }
    )

    func testNonFinalBaseClassHasOverridableMembers() {
        assertMacroExpansion(
            #"""
            @Model class Trip {
                #Unique<Trip>([\.name])
                var name: String
                var destination: Place?
                init(name: String) { self.name = name }
            }
            """#,
            expandedSource: #"""
            class Trip {
            \#(persisted("name", "String"))
            \#(persisted("destination", "Place?"))
                init(name: String) { self.name = name }

                @Transient var _$backingData = PGModel.ModelBackingData()

                @Transient private let _$observationRegistrar = Observation.ObservationRegistrar()

                required init(backingData: PGModel.ModelBackingData) throws {
                    self._name = try backingData.value(forKey: "name", codec: PGModel._AttributeCodecs.codec(String.self))
                    self._destination = try backingData.value(forKey: "destination", codec: PGModel._AttributeCodecs.codec(Place?.self))
                    self._$backingData = backingData
                }

                class var schemaMetadata: [PGModel.Schema.PropertyMetadata] {
                    [
                        PGModel.Schema.PropertyMetadata(name: "name", keypath: \Trip.name, codec: PGModel._AttributeCodecs.codec(String.self)),
                        PGModel.Schema.PropertyMetadata(name: "destination", keypath: \Trip.destination, codec: PGModel._AttributeCodecs.codec(Place?.self))
                    ]
                }

                class var _$uniquenessConstraints: [[String]] {
                    [["name"]]
                }

                class var _$indexes: [[String]] {
                    []
                }

                class var _$superentity: (any PGModel.PersistentModel.Type)? {
                    nil
                }
            }

            extension Trip: PGModel.PersistentModel {
            }

            extension Trip: Observation.Observable {
            }
            """#,
            macroSpecs: modelMacroSpecs
        )
    }

    func testSubclass() {
        assertMacroExpansion(
            """
            @Model class BusinessTrip: Trip {
                var perdiem: Double = 0.0
                init(name: String, perdiem: Double) { self.perdiem = perdiem; super.init(name: name) }
            }
            """,
            expandedSource: #"""
            class BusinessTrip: Trip {
            \#(persisted("perdiem", "Double"))
                init(name: String, perdiem: Double) { self.perdiem = perdiem; super.init(name: name) }

                @Transient private let _$observationRegistrar = Observation.ObservationRegistrar()

                required init(backingData: PGModel.ModelBackingData) throws {
                    self._perdiem = try backingData.value(forKey: "perdiem", codec: PGModel._AttributeCodecs.codec(Double.self))
                    try super.init(backingData: backingData)
                }

                override class var schemaMetadata: [PGModel.Schema.PropertyMetadata] {
                    super.schemaMetadata + [
                        PGModel.Schema.PropertyMetadata(name: "perdiem", keypath: \BusinessTrip.perdiem, codec: PGModel._AttributeCodecs.codec(Double.self))
                    ]
                }

                override class var _$superentity: (any PGModel.PersistentModel.Type)? {
                    Trip.self
                }
            }
            """#,
            macroSpecs: subclassSpecs
        )
    }

    func testSubclassWithItsOwnUniqueAndIndex() {
        // `name` is inherited: the macro cannot see it, and leaves it to the runtime and type checker.
        assertMacroExpansion(
            #"""
            @Model public class BusinessTrip: Trip {
                #Unique<BusinessTrip>([\.name, \.company])
                #Index<BusinessTrip>([\.company])
                public var company: String
                @Relationship(deleteRule: .cascade) public var expenses: [Expense] = []
                public init(name: String, company: String) { self.company = company; super.init(name: name) }
            }
            """#,
            expandedSource: """
            public class BusinessTrip: Trip {
            \(persisted("company", "String", modifiers: "public "))
            \(persisted("expenses", "[Expense]", attributes: ["@Relationship(deleteRule: .cascade)"], modifiers: "public "))
                public init(name: String, company: String) { self.company = company; super.init(name: name) }

            \(generatedMembers("BusinessTrip", [
                ("company", "String", nil),
                ("expenses", "[Expense]", relationship("deleteRule: .cascade")),
            ], access: "public ", uniqueness: #"[["name", "company"]]"#, indexes: #"[["company"]]"#, shape: .subclass(of: "Trip")))
            }
            """,
            macroSpecs: subclassSpecs
        )
    }

    func testSubclassesOfSubclassesAndSiblings() {
        assertMacroExpansion(
            #"""
            @Model class BusinessTrip: Trip, Codable {
                var company: String = ""
            }
            @Model final class ExecutiveTrip: BusinessTrip {
                #Index<ExecutiveTrip>([\.lounge])
                var lounge: String?
            }
            @Model open class PersonalTrip: Archive.Trip {
                var reason: Reason = .leisure
            }
            @Model final class DayTrip: PersonalTrip {
            }
            """#,
            expandedSource: #"""
            class BusinessTrip: Trip, Codable {
            \#(persisted("company", "String"))

            \#(generatedMembers("BusinessTrip", [("company", "String", nil)], shape: .subclass(of: "Trip")))
            }
            final class ExecutiveTrip: BusinessTrip {
            \#(persisted("lounge", "String?"))

            \#(generatedMembers("ExecutiveTrip", [("lounge", "String?", nil)], indexes: #"[["lounge"]]"#, shape: .subclass(of: "BusinessTrip")))
            }
            open class PersonalTrip: Archive.Trip {
            \#(persisted("reason", "Reason"))

            \#(generatedMembers("PersonalTrip", [("reason", "Reason", nil)], access: "public ", overridable: "open ", shape: .subclass(of: "Archive.Trip")))
            }
            final class DayTrip: PersonalTrip {

            \#(generatedMembers("DayTrip", [], shape: .subclass(of: "PersonalTrip")))
            }
            """#,
            macroSpecs: subclassSpecs
        )
    }

    func testFinalClassListingProtocolsKeepsItsStaticShape() {
        assertMacroExpansion(
            #"""
            @Model final class Trip: Hashable, TripProtocol {
                #Index<Trip>([\.name])
                var name: String
                init(name: String) { self.name = name }
            }
            """#,
            expandedSource: """
            final class Trip: Hashable, TripProtocol {
            \(persisted("name", "String"))
                init(name: String) { self.name = name }

            \(generatedMembers("Trip", [("name", "String", nil)], indexes: #"[["name"]]"#))
            }

            extension Trip: PGModel.PersistentModel {
            }

            extension Trip: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testUnknownFirstProtocolIsNotTakenForASuperclassWhenTheCompilerAsksForPersistentModel() {
        // `Named` could be a class by its spelling, but a class that still needs PersistentModel does
        // not inherit from a model. (The compiler passes the member role this list only when the
        // `@Model` declaration's member role lists `conformances:`.)
        assertMacroExpansion(
            """
            @Model final class Trip: Named {
                var name: String
                init(name: String) { self.name = name }
            }
            """,
            expandedSource: """
            final class Trip: Named {
            \(persisted("name", "String"))
                init(name: String) { self.name = name }

            \(generatedMembers("Trip", [("name", "String", nil)]))
            }

            extension Trip: PGModel.PersistentModel {
            }

            extension Trip: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }
}
