import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct PGModelMacrosPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = []
}
