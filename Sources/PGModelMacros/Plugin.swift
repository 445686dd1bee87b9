import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin behind `@Model`, `@Attribute`, `@Relationship`, `@Transient`, `#Unique`,
/// `#Index` and `@ModelActor`.
@main
struct PGModelMacrosPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = [
        ModelMacro.self,
        PersistedPropertyMacro.self,
        AttributeMacro.self,
        RelationshipMacro.self,
        TransientMacro.self,
        UniqueMacro.self,
        IndexMacro.self,
        ModelActorMacro.self,
    ]
}
