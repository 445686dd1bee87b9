import PGModelMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosTestSupport
import XCTest

/// `@ModelActor`: an executor and container for the actor, `init(modelContainer:)` and the conformance.
final class ModelActorMacroTests: XCTestCase {
    private let specs: [String: MacroSpec] = [
        "ModelActor": MacroSpec(type: ModelActorMacro.self, conformances: ["ModelActor"]),
    ]

    func testInternalActor() {
        assertMacroExpansion(
            """
            @ModelActor actor Importer {
                func count() throws -> Int { 0 }
            }
            """,
            expandedSource: """
            actor Importer {
                func count() throws -> Int { 0 }

                nonisolated let modelExecutor: any PGModel.ModelExecutor

                nonisolated let modelContainer: PGModel.ModelContainer

                init(modelContainer: PGModel.ModelContainer) {
                    let modelContext = PGModel.ModelContext(modelContainer)
                    self.modelExecutor = PGModel.DefaultSerialModelExecutor(modelContext: modelContext)
                    self.modelContainer = modelContainer
                }
            }

            extension Importer: PGModel.ModelActor {
            }
            """,
            macroSpecs: specs
        )
    }

    func testPublicActorGetsPublicMembers() {
        assertMacroExpansion(
            """
            @ModelActor public actor Importer {
            }
            """,
            expandedSource: """
            public actor Importer {

                public nonisolated let modelExecutor: any PGModel.ModelExecutor

                public nonisolated let modelContainer: PGModel.ModelContainer

                public init(modelContainer: PGModel.ModelContainer) {
                    let modelContext = PGModel.ModelContext(modelContainer)
                    self.modelExecutor = PGModel.DefaultSerialModelExecutor(modelContext: modelContext)
                    self.modelContainer = modelContainer
                }
            }

            extension Importer: PGModel.ModelActor {
            }
            """,
            macroSpecs: specs
        )
    }

    func testAlreadyConformingActorGetsNoExtension() {
        assertMacroExpansion(
            """
            @ModelActor actor Importer: ModelActor {
            }
            """,
            expandedSource: """
            actor Importer: ModelActor {

                nonisolated let modelExecutor: any PGModel.ModelExecutor

                nonisolated let modelContainer: PGModel.ModelContainer

                init(modelContainer: PGModel.ModelContainer) {
                    let modelContext = PGModel.ModelContext(modelContainer)
                    self.modelExecutor = PGModel.DefaultSerialModelExecutor(modelContext: modelContext)
                    self.modelContainer = modelContainer
                }
            }
            """,
            macroSpecs: ["ModelActor": MacroSpec(type: ModelActorMacro.self, conformances: [])]
        )
    }

    func testClassIsRejected() {
        assertMacroExpansion(
            """
            @ModelActor final class Importer {
            }
            """,
            expandedSource: """
            final class Importer {
            }
            """,
            diagnostics: [DiagnosticSpec(
                message: "@ModelActor can only be applied to an actor, which serializes access to its model context; this is a class.",
                line: 1, column: 1
            )],
            macroSpecs: specs
        )
    }

    func testStructIsRejected() {
        assertMacroExpansion(
            """
            @ModelActor struct Importer {
            }
            """,
            expandedSource: """
            struct Importer {
            }
            """,
            diagnostics: [DiagnosticSpec(
                message: "@ModelActor can only be applied to an actor, which serializes access to its model context; this is a struct.",
                line: 1, column: 1
            )],
            macroSpecs: specs
        )
    }
}
