import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin behind `@Model`, `@Attribute`, `@Transient`, `#Unique` and `#Index`.
@main
struct PGModelMacrosPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = [
        ModelMacro.self,
        PersistedPropertyMacro.self,
        AttributeMacro.self,
        TransientMacro.self,
        UniqueMacro.self,
        IndexMacro.self,
    ]
}
