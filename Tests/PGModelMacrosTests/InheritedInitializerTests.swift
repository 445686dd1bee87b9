import PGModelMacros
import SwiftParser
import SwiftSyntax
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import XCTest

/// The seed's `@Model class BusinessTrip: Trip { var perdiem: Double = 0.0 }` declares no initializer and
/// relies on Swift's initializer inheritance; `@Model` must not take that away, and says what to write
/// when inheritance cannot apply.
final class InheritedInitializerTests: XCTestCase {
    private func expand(_ source: String) -> (source: String, diagnostics: [String]) {
        let file = Parser.parse(source: source)
        let context = BasicMacroExpansionContext(sourceFiles: [file: .init(moduleName: "Trips", fullFilePath: "Trips.swift")])
        let expanded = file.expand(macros: ["Model": ModelMacro.self, "_PersistedProperty": PersistedPropertyMacro.self],
                                   in: context, indentationWidth: .spaces(4))
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

    func testAPropertyWithoutDefaultIsNamedInAFullSentence() {
        let result = expand("""
            @Model class PersonalTrip: Trip {
                var reason: String
                var perdiem: Double = 0
            }
            """)
        XCTAssertEqual(result.diagnostics, [
            "@Model class 'PersonalTrip' declares no initializer, so Swift lets it inherit the initializers of 'Trip' only if "
                + "every stored property has a default value; give 'reason' a default value (e.g. `= 0.0`), or write an "
                + "initializer that sets it and calls super.init.",
        ])
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
