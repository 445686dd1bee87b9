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

/// One `#Index` group: its kind as written (`binary` for an array literal) and its property names.
struct IndexGroup: Equatable {
    var kind: String
    var names: [String]
}

/// Reads the property-name groups out of `#Unique` / `#Index` uses in a class body.
struct ConstraintGroups {
    /// The groups of `#Unique` per owner (no `scope`, or `scope: .owner`).
    var uniqueness: [[String]] = []
    /// The groups of `#Unique(…, scope: .allUsers)`.
    var globalUniqueness: [[String]] = []
    var indexes: [IndexGroup] = []
    var hasUniqueness = false
    var hasGlobalUniqueness = false
    var hasIndexes = false
    var diagnostics: [Diagnostic] = []

    /// The index kinds of `Schema.Index.Types`, as the `.binary(…)` / `.rtree(…)` arguments name them.
    static let indexKinds: Set<String> = ["binary", "rtree"]

    /// Collects every `#Unique` and `#Index` among `members`. `persisted` are the class's own persisted
    /// properties and `notPersisted` the names of its other properties; a name in neither may be
    /// inherited and is left to the type checker (and, for an rtree index, to the schema's validation).
    init(members: MemberBlockItemListSyntax, model: String, persisted: [PersistedProperty], notPersisted: Set<String>) {
        var byName: [String: PersistedProperty] = [:]
        for property in persisted { byName[property.name] = property }
        for item in members {
            guard let expansion = item.decl.as(MacroExpansionDeclSyntax.self) else { continue }
            let macro = expansion.macroName.text
            guard macro == "Unique" || macro == "Index" else { continue }
            let groups = parse(expansion, macro: macro, model: model, persisted: byName, notPersisted: notPersisted)
            if macro == "Unique" {
                guard let scope = uniquenessScope(of: expansion, model: model) else { continue }
                if scope == "allUsers" {
                    hasGlobalUniqueness = true
                    globalUniqueness += groups.map(\.names)
                } else {
                    hasUniqueness = true
                    uniqueness += groups.map(\.names)
                }
            } else {
                hasIndexes = true
                indexes += groups
            }
        }
    }

    private mutating func parse(
        _ expansion: MacroExpansionDeclSyntax, macro: String, model: String,
        persisted: [String: PersistedProperty], notPersisted: Set<String>
    ) -> [IndexGroup] {
        var groups: [IndexGroup] = []
        for argument in expansion.arguments {
            // `#Unique`'s scope is read by `uniquenessScope(of:model:)`.
            if macro == "Unique", argument.label?.text == "scope" { continue }
            guard argument.label == nil, let parsed = Self.group(argument.expression, macro: macro) else {
                diagnostics.append(Diagnostic(node: argument, message: ModelDiagnostic.constraintArgument(macro, model: model)))
                continue
            }
            let (kind, array) = parsed
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
                if notPersisted.contains(name) && persisted[name] == nil {
                    diagnostics.append(Diagnostic(node: keyPath, message: ModelDiagnostic.constraintNotPersisted(macro, property: name, model: model)))
                    continue
                }
                if kind == "rtree", let property = persisted[name], case .unsupported(let what) = RTreeTypeCheck.check(property) {
                    diagnostics.append(Diagnostic(node: keyPath, message: ModelDiagnostic.rtreeUnsupported(property: name, model: model, what: what)))
                    continue
                }
                group.append(name)
            }
            // A group whose key paths were all rejected would become an empty constraint.
            if !group.isEmpty { groups.append(IndexGroup(kind: kind, names: group)) }
        }
        return groups
    }

    /// The scope a `#Unique` names — `"owner"` (also without a `scope:` argument) or `"allUsers"` — as
    /// `.allUsers` or `UniquenessScope.allUsers`; `nil`, after a diagnostic, for anything else: `@Model` reads
    /// it from the source, so it must be a literal.
    private mutating func uniquenessScope(of expansion: MacroExpansionDeclSyntax, model: String) -> String? {
        // Elements of the argument list itself, not of a filtered copy, whose positions would be the copy's.
        let scopeCount = expansion.arguments.reduce(0) { $0 + ($1.label?.text == "scope" ? 1 : 0) }
        guard let argument = expansion.arguments.first(where: { $0.label?.text == "scope" }) else { return "owner" }
        if scopeCount == 1, let member = argument.expression.as(MemberAccessExprSyntax.self), member.declName.argumentNames == nil {
            let name = member.declName.baseName.text
            let base = member.base.map { $0.trimmedDescription }
            if ["owner", "allUsers"].contains(name), base == nil || base == "UniquenessScope" || base == "PGModel.UniquenessScope" {
                return name
            }
        }
        diagnostics.append(Diagnostic(node: argument, message: ModelDiagnostic.uniqueScope(model: model)))
        return nil
    }

    /// The kind and array literal of one argument: `[\.a, \.b]` is a binary group (and the only form
    /// `#Unique` takes); `#Index` also takes `.binary([…])` and `.rtree([…])`, optionally qualified
    /// (`Schema.Index<Trip>.Types<Trip>.rtree([…])`).
    private static func group(_ expression: ExprSyntax, macro: String) -> (String, ArrayExprSyntax)? {
        if let array = expression.as(ArrayExprSyntax.self) { return ("binary", array) }
        guard macro == "Index", let call = expression.as(FunctionCallExprSyntax.self),
              let member = call.calledExpression.as(MemberAccessExprSyntax.self),
              indexKinds.contains(member.declName.baseName.text), member.declName.argumentNames == nil,
              call.trailingClosure == nil, call.arguments.count == 1, let only = call.arguments.first, only.label == nil,
              let array = only.expression.as(ArrayExprSyntax.self)
        else { return nil }
        return (member.declName.baseName.text, array)
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
