import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@ModelActor`: gives an actor its own `ModelContext`, run on the actor's serial executor.
///
/// ```swift
/// @ModelActor actor Importer {
///     func importTrips(_ names: [String]) throws {
///         for name in names { modelContext.insert(Trip(name: name)) }
///         try modelContext.save()
///     }
/// }
/// // gains
/// nonisolated let modelExecutor: any PGModel.ModelExecutor
/// nonisolated let modelContainer: PGModel.ModelContainer
/// init(modelContainer: PGModel.ModelContainer) { … }
/// extension Importer: PGModel.ModelActor {}
/// ```
public struct ModelActorMacro {}

extension ModelActorMacro: MemberMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let actor = declaration.as(ActorDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: ModelDiagnostic.notAnActor(kind(of: declaration))))
            return []
        }
        // Public for a public actor, so that other modules can create it and see its conformance's members.
        let access = GeneratedAccess.prefix(for: actor.modifiers)
        // `nonisolated let`: the executor and container are immutable and Sendable, and the ModelActor
        // protocol reads the executor from outside the actor to schedule its jobs.
        return [
            "\(raw: access)nonisolated let modelExecutor: any PGModel.ModelExecutor",
            "\(raw: access)nonisolated let modelContainer: PGModel.ModelContainer",
            """
            \(raw: access)init(modelContainer: PGModel.ModelContainer) {
                let modelContext = PGModel.ModelContext(modelContainer)
                self.modelExecutor = PGModel.DefaultSerialModelExecutor(modelContext: modelContext)
                self.modelContainer = modelContainer
            }
            """,
        ]
    }

    private static func kind(of declaration: some DeclGroupSyntax) -> String {
        if declaration.is(ClassDeclSyntax.self) { return "class" }
        if declaration.is(StructDeclSyntax.self) { return "struct" }
        if declaration.is(EnumDeclSyntax.self) { return "enum" }
        if declaration.is(ProtocolDeclSyntax.self) { return "protocol" }
        if declaration.is(ExtensionDeclSyntax.self) { return "extension" }
        return "declaration"
    }
}

extension ModelActorMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        // The member role has diagnosed anything but an actor; a conformance would only add errors.
        guard declaration.is(ActorDeclSyntax.self),
              protocols.contains(where: { ModelInheritance.lastComponent(of: $0) == "ModelActor" })
        else { return [] }
        let decl: DeclSyntax = "extension \(type.trimmed): PGModel.ModelActor {}"
        return decl.as(ExtensionDeclSyntax.self).map { [$0] } ?? []
    }
}
