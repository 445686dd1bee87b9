import PGModelMacros
import SwiftParser
import SwiftSyntax
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import XCTest

/// The seed's `@Model class BusinessTrip: Trip { var perdiem: Double = 0.0 }` declares no initializer and
/// relies on Swift's initializer inheritance; `@Model` must not take that away, also when a property has no
/// default value (it starts unassigned).
final class InheritedInitializerTests: XCTestCase {
    private func expand(_ source: String) -> (source: String, diagnostics: [String]) {
        let file = Parser.parse(source: source)
        let context = BasicMacroExpansionContext(sourceFiles: [file: .init(moduleName: "Trips", fullFilePath: "Trips.swift")])
        let expanded = file.expand(macros: ["Model": ModelMacro.self, "_PersistedProperty": PersistedPropertyMacro.self],
                                   contextGenerator: { _ in context }, indentationWidth: .spaces(4))
        return (expanded.description, context.diagnostics.map(\.message))
    }

    func testASubclassWithoutInitializersRestoresItsValuesInAnOverride() {
        let result = expand("""
            @Model class BusinessTrip: Trip {
                var perdiem: Double = 0.0
                var note: String?
            }
            """)
        XCTAssertEqual(result.diagnostics, [])
        XCTAssertFalse(result.source.contains("init(backingData:"), result.source)
        XCTAssertTrue(result.source.contains("override func _$restoreInheritingValues(from backingData: PGModel.ModelBackingData) throws {"), result.source)
        XCTAssertTrue(result.source.contains(#"self._perdiem = try backingData.value(forKey: "perdiem""#), result.source)
        XCTAssertTrue(result.source.contains("try super._$restoreInheritingValues(from: backingData)"), result.source)
    }

    func testAConvenienceInitializerKeepsInheritance() {
        let result = expand("""
            @Model class BusinessTrip: Trip {
                var perdiem: Double = 0.0
                convenience init(perdiem: Double) { self.init(name: "", destination: ""); self.perdiem = perdiem }
            }
            """)
        XCTAssertEqual(result.diagnostics, [])
        XCTAssertFalse(result.source.contains("required init(backingData:"), result.source)
    }

    func testASubclassWithItsOwnInitializerKeepsRequiredInit() {
        let result = expand("""
            @Model class BusinessTrip: Trip {
                var perdiem: Double
                init(perdiem: Double) { self.perdiem = perdiem; super.init(name: "", destination: "") }
            }
            """)
        XCTAssertEqual(result.diagnostics, [])
        XCTAssertTrue(result.source.contains("required init(backingData: PGModel.ModelBackingData) throws {"), result.source)
        XCTAssertFalse(result.source.contains("_$restoreInheritingValues"), result.source)
    }

    /// The seed's `@Model class PersonalTrip: Trip { var reason: Reason }` compiles as in SwiftData: a property
    /// without a default value starts unassigned, so the class still inherits `Trip`'s initializers.
    func testAPropertyWithoutDefaultStartsUnassignedAndKeepsInheritance() {
        let result = expand("""
            @Model class PersonalTrip: Trip {
                var reason: String
                var perdiem: Double = 0
                var note: String?
            }
            """)
        XCTAssertEqual(result.diagnostics, [])
        XCTAssertFalse(result.source.contains("init(backingData:"), result.source)
        XCTAssertTrue(result.source.contains("@Transient private var _reason: String? = nil"), result.source)
        XCTAssertTrue(result.source.contains("guard let value = _reason else {"), result.source)
        XCTAssertTrue(result.source.contains(#"PGModel._unassignedPropertyRead("reason", of: Self.self)"#), result.source)
        XCTAssertTrue(result.source.contains(#"self._$didChange("reason", from: oldValue, to: Optional(newValue))"#), result.source)
        XCTAssertTrue(result.source.contains("reader.read(unassigned: self._reason, PGModel._AttributeCodecs.codec(String.self))"), result.source)
        // Properties with a value keep their plain storage and reads.
        XCTAssertTrue(result.source.contains("@Transient private var _perdiem: Double"), result.source)
        XCTAssertFalse(result.source.contains("_perdiem: Double?"), result.source)
        XCTAssertTrue(result.source.contains("reader.read(self._perdiem, PGModel._AttributeCodecs.codec(Double.self))"), result.source)
        XCTAssertTrue(result.source.contains("reader.read(self._note, PGModel._AttributeCodecs.codec(String?.self))"), result.source)
        XCTAssertTrue(result.source.contains(#"self._reason = try backingData.value(forKey: "reason""#), result.source)
    }

    /// With an initializer of its own, or in a root class, a property without a default is plain storage:
    /// Swift makes the initializer set it.
    func testAPropertyWithoutDefaultIsPlainStorageWhenAnInitializerSetsIt() {
        for source in [
            """
            @Model class PersonalTrip: Trip {
                var reason: String
                init(reason: String) { self.reason = reason; super.init(name: "", destination: "") }
            }
            """,
            """
            @Model final class Trip {
                var reason: String
                init(reason: String) { self.reason = reason }
            }
            """,
        ] {
            let result = expand(source)
            XCTAssertEqual(result.diagnostics, [])
            XCTAssertTrue(result.source.contains("@Transient private var _reason: String"), result.source)
            XCTAssertFalse(result.source.contains("_reason: String?"), result.source)
            XCTAssertFalse(result.source.contains("unassigned"), result.source)
        }
    }

    func testANonFinalRootCallsTheHookOnceItsValuesAreSet() {
        let result = expand("""
            @Model class Trip {
                var name: String
                init(name: String) { self.name = name }
            }
            """)
        XCTAssertTrue(result.source.contains("""
                    self._$backingData = backingData
                    try self._$restoreInheritingValues(from: backingData)
            """), result.source)
        XCTAssertTrue(result.source.contains("func _$restoreInheritingValues(from backingData: PGModel.ModelBackingData) throws {"), result.source)
    }
}
