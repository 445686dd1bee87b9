import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `#Unique<Trip>([\.name, \.startDate])`: expands to nothing; `@Model` reads it from the class body.
public struct UniqueMacro: DeclarationMacro {
    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        ConstraintGroups.checkPlacement(of: node, macro: "Unique", in: context)
        return []
    }
}

/// `#Index<Trip>([\.name], [\.startDate])`: expands to nothing; `@Model` reads it from the class body.
public struct IndexMacro: DeclarationMacro {
    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        ConstraintGroups.checkPlacement(of: node, macro: "Index", in: context)
        return []
    }
}

/// Reads the property-name groups out of `#Unique` / `#Index` uses in a class body.
struct ConstraintGroups {
    var uniqueness: [[String]] = []
    var indexes: [[String]] = []
    var hasUniqueness = false
    var hasIndexes = false
    var diagnostics: [Diagnostic] = []

    /// Collects every `#Unique` and `#Index` among `members`. `persisted` and `notPersisted` are the
    /// class's own property names; a name in neither may be inherited and is left to the type checker.
    init(members: MemberBlockItemListSyntax, model: String, persisted: Set<String>, notPersisted: Set<String>) {
        for item in members {
            guard let expansion = item.decl.as(MacroExpansionDeclSyntax.self) else { continue }
            let macro = expansion.macroName.text
            guard macro == "Unique" || macro == "Index" else { continue }
            let groups = parse(expansion, macro: macro, model: model, persisted: persisted, notPersisted: notPersisted)
            if macro == "Unique" {
                hasUniqueness = true
                uniqueness += groups
            } else {
                hasIndexes = true
                indexes += groups
            }
        }
    }

    private mutating func parse(
        _ expansion: MacroExpansionDeclSyntax, macro: String, model: String,
        persisted: Set<String>, notPersisted: Set<String>
    ) -> [[String]] {
        var groups: [[String]] = []
        for argument in expansion.arguments {
            guard argument.label == nil, let array = argument.expression.as(ArrayExprSyntax.self) else {
                diagnostics.append(Diagnostic(node: argument, message: ModelDiagnostic.constraintArgument(macro, model: model)))
                continue
            }
            guard !array.elements.isEmpty else {
                diagnostics.append(Diagnostic(node: array, message: ModelDiagnostic.constraintEmptyGroup(macro)))
                continue
            }
            var group: [String] = []
            for element in array.elements {
                guard let keyPath = element.expression.as(KeyPathExprSyntax.self) else {
                    diagnostics.append(Diagnostic(node: element.expression, message: ModelDiagnostic.constraintArgument(macro, model: model)))
                    continue
                }
                guard let name = Self.singlePropertyName(keyPath) else {
                    diagnostics.append(Diagnostic(
                        node: keyPath,
                        message: ModelDiagnostic.constraintKeyPath(macro, keyPath: keyPath.trimmedDescription, model: model)
                    ))
                    continue
                }
                if notPersisted.contains(name) && !persisted.contains(name) {
                    diagnostics.append(Diagnostic(node: keyPath, message: ModelDiagnostic.constraintNotPersisted(macro, property: name, model: model)))
                    continue
                }
                group.append(name)
            }
            // A group whose key paths were all rejected would become an empty constraint.
            if !group.isEmpty { groups.append(group) }
        }
        return groups
    }

    /// `\.name` and `\Trip.name` give "name"; anything longer, optional-chained or subscripted gives nil.
    static func singlePropertyName(_ keyPath: KeyPathExprSyntax) -> String? {
        guard keyPath.components.count == 1, let component = keyPath.components.first,
              case .property(let property) = component.component,
              property.declName.argumentNames == nil
        else { return nil }
        let token = property.declName.baseName
        return token.identifier?.name ?? token.text
    }

    /// `#Unique` and `#Index` mean nothing outside a class body, where no `@Model` would read them.
    static func checkPlacement(of node: some FreestandingMacroExpansionSyntax, macro: String, in context: some MacroExpansionContext) {
        guard let enclosing = context.lexicalContext.first else {
            // Top level of a file.
            context.diagnose(Diagnostic(node: node, message: ModelDiagnostic.constraintOutsideModel(macro)))
            return
        }
        if !enclosing.is(ClassDeclSyntax.self) {
            context.diagnose(Diagnostic(node: node, message: ModelDiagnostic.constraintOutsideModel(macro)))
        }
    }
}
