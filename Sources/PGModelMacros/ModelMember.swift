import SwiftDiagnostics
import SwiftSyntax

/// A stored property that `@Model` persists.
struct PersistedProperty {
    /// The property name as written (backticks kept), for key paths and member access.
    let identifier: String
    /// The name without backticks: the schema's property name.
    let name: String
    /// The declared type, trimmed.
    let type: TypeSyntax
    /// What `@Attribute(...)` or `@Relationship(...)` says about the property; nil when it has neither.
    let metadata: PropertyMetadataAttribute?
    /// Whether the declaration already carries `@_PersistedProperty` (written by hand or by an earlier pass).
    let isAlreadyPersisted: Bool
    /// The default value as written (`= 0.0`), unless it is `nil`: a migration fills existing rows with it.
    var defaultValue: ExprSyntax? = nil
    /// Whether the property starts with a value (`= …`, or an optional's implicit `nil`): what Swift
    /// requires of every stored property of a subclass that inherits its superclass's initializers.
    var hasInitialValue = false
}

/// The marker attribute whose arguments `@Model` copies into the property's schema metadata.
enum PropertyMetadataAttribute {
    /// `@Attribute(args)`: becomes `metadata: PGModel.Schema.Attribute(args)`.
    case attribute(LabeledExprListSyntax)
    /// `@Relationship(args)`: becomes `metadata: PGModel.Schema.Relationship(args)`.
    case relationship(LabeledExprListSyntax)
}

/// How `@Model` treats one member of the class. Both the member role (which emits the diagnostics) and
/// the member-attribute role (which must agree on what it marks) classify members with this.
enum ModelMember {
    case persisted(PersistedProperty)
    /// Not stored by PGModel and fine as it is: computed, static, @Transient, underscored, not a property.
    case ignored
    /// Would be persisted but cannot be; each diagnostic explains why.
    case invalid([Diagnostic])

    static let transientNames: Set<String> = ["Transient"]
    static let attributeNames: Set<String> = ["Attribute"]
    static let relationshipNames: Set<String> = ["Relationship"]
    static let persistedPropertyNames: Set<String> = ["_PersistedProperty"]

    static func classify(_ member: some DeclSyntaxProtocol, in model: String) -> ModelMember {
        guard let variable = member.as(VariableDeclSyntax.self) else { return .ignored }
        return classify(variable, in: model)
    }

    static func classify(_ variable: VariableDeclSyntax, in model: String) -> ModelMember {
        let modifiers = Set(variable.modifiers.map(\.name.text))
        if modifiers.contains("static") || modifiers.contains("class") { return .ignored }

        let bindings = Array(variable.bindings)
        let isStored = bindings.allSatisfy { binding in
            guard let accessors = binding.accessorBlock else { return true }
            return AccessorKind.of(accessors) == .observers
        }
        guard isStored else { return .ignored }

        let names = bindings.compactMap { $0.pattern.as(IdentifierPatternSyntax.self)?.identifier }
        let isTransient = variable.attributes.contains(named: transientNames)
        let isUnderscored = names.contains { plainName($0).hasPrefix("_") }
        if isTransient || isUnderscored {
            if isTransient, let relationship = variable.attributes.first(named: relationshipNames) {
                let name = names.first.map(plainName) ?? "?"
                return .invalid([Diagnostic(node: relationship, message: ModelDiagnostic.transientRelationship(name, of: model))])
            }
            return checkDefaultValues(variable, isTransient: isTransient)
        }

        guard bindings.count == 1, let binding = bindings.first, let identifier = names.first else {
            return .invalid([Diagnostic(node: variable, message: ModelDiagnostic.multipleBindings(names.map(plainName), of: model))])
        }
        let name = plainName(identifier)
        var diagnostics: [Diagnostic] = []
        let attribute = variable.attributes.first(named: attributeNames)
        let relationship = variable.attributes.first(named: relationshipNames)

        if let attribute, let relationship {
            // Either would be a guess at what the user meant; say so rather than ignore one of them.
            diagnostics.append(Diagnostic(node: attribute.position < relationship.position ? relationship : attribute,
                                          message: ModelDiagnostic.attributeAndRelationship(name, of: model)))
        }
        if variable.bindingSpecifier.tokenKind == .keyword(.let) {
            let fixIt = FixIt(
                message: ModelFixIt("Replace 'let' with 'var'"),
                changes: [.replace(
                    oldNode: Syntax(variable.bindingSpecifier),
                    newNode: Syntax(variable.bindingSpecifier.with(\.tokenKind, .keyword(.var)))
                )]
            )
            let message = relationship != nil
                ? ModelDiagnostic.letRelationship(name, of: model)
                : ModelDiagnostic.letProperty(name, of: model)
            diagnostics.append(Diagnostic(node: variable.bindingSpecifier, message: message, fixIts: [fixIt]))
        }
        if let lazy = variable.modifiers.first(where: { $0.name.tokenKind == .keyword(.lazy) }) {
            // Keep the modifier's leading trivia (the line break and indentation before it).
            let nothing = TokenSyntax(.identifier(""), leadingTrivia: lazy.leadingTrivia, trailingTrivia: [], presence: .present)
            let fixIt = FixIt(message: ModelFixIt("Remove 'lazy'"), changes: [.replace(oldNode: Syntax(lazy), newNode: Syntax(nothing))])
            diagnostics.append(Diagnostic(node: lazy, message: ModelDiagnostic.lazyProperty(name, of: model), fixIts: [fixIt]))
        }
        for reference in variable.modifiers where reference.name.tokenKind == .keyword(.weak) || reference.name.tokenKind == .keyword(.unowned) {
            diagnostics.append(Diagnostic(node: reference, message: ModelDiagnostic.referenceModifier(name, of: model, modifier: reference.name.text)))
        }
        if let accessors = binding.accessorBlock {
            let fixIt = FixIt(
                message: ModelFixIt("Remove the observers"),
                changes: [.replace(oldNode: Syntax(binding), newNode: Syntax(binding.with(\.accessorBlock, nil).with(\.trailingTrivia, [])))]
            )
            diagnostics.append(Diagnostic(node: accessors, message: ModelDiagnostic.observers(name, of: model), fixIts: [fixIt]))
        }

        guard let annotation = binding.typeAnnotation else {
            diagnostics.append(missingTypeDiagnostic(binding, identifier: identifier, model: model))
            return .invalid(diagnostics)
        }
        let type = annotation.type.trimmed
        switch AttributeTypeCheck.check(annotation.type) {
        case .plausible:
            break
        case .unsupported(let reason, let fix):
            var fixIts: [FixIt] = []
            if let fix {
                let new = fix.new.with(\.leadingTrivia, fix.old.leadingTrivia).with(\.trailingTrivia, fix.old.trailingTrivia)
                fixIts.append(FixIt(
                    message: ModelFixIt("Use '\(fix.new.trimmedDescription)'"),
                    changes: [.replace(oldNode: Syntax(fix.old), newNode: Syntax(new))]
                ))
            }
            diagnostics.append(Diagnostic(
                node: annotation.type,
                message: ModelDiagnostic.unsupportedType(name, of: model, type: type.description, reason: reason),
                fixIts: fixIts
            ))
        }
        guard diagnostics.isEmpty else { return .invalid(diagnostics) }

        func arguments(of attribute: AttributeSyntax) -> LabeledExprListSyntax {
            if case .argumentList(let list) = attribute.arguments { return list.trimmed }
            return LabeledExprListSyntax([])
        }
        let metadata: PropertyMetadataAttribute? = if let relationship {
            .relationship(arguments(of: relationship))
        } else if let attribute {
            .attribute(arguments(of: attribute))
        } else {
            nil
        }
        return .persisted(PersistedProperty(
            identifier: identifier.text,
            name: name,
            type: type,
            metadata: metadata,
            isAlreadyPersisted: variable.attributes.contains(named: persistedPropertyNames),
            defaultValue: binding.initializer.flatMap { $0.value.is(NilLiteralExprSyntax.self) ? nil : $0.value.trimmed },
            hasInitialValue: binding.initializer != nil || type.is(OptionalTypeSyntax.self)
                || type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self)
                || type.as(IdentifierTypeSyntax.self)?.name.text == "Optional"
        ))
    }

    /// Properties PGModel does not store keep their value on fetched instances only through a default.
    private static func checkDefaultValues(_ variable: VariableDeclSyntax, isTransient: Bool) -> ModelMember {
        var diagnostics: [Diagnostic] = []
        for binding in variable.bindings where binding.initializer == nil {
            // `var x: Int?` is implicitly nil; a `let` is never implicitly initialized.
            let implicitlyNil = variable.bindingSpecifier.tokenKind == .keyword(.var)
                && binding.typeAnnotation.map { isOptionalType($0.type) } == true
            guard !implicitlyNil, let identifier = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier else { continue }
            let name = plainName(identifier)
            let message = isTransient
                ? ModelDiagnostic.transientWithoutDefault(name)
                : ModelDiagnostic.underscoredWithoutDefault(name)
            diagnostics.append(Diagnostic(node: binding, message: message))
        }
        return diagnostics.isEmpty ? .ignored : .invalid(diagnostics)
    }

    private static func missingTypeDiagnostic(_ binding: PatternBindingSyntax, identifier: TokenSyntax, model: String) -> Diagnostic {
        let name = plainName(identifier)
        let initializer = binding.initializer?.value
        let inferred = initializer.flatMap(inferredType)
        let example = "var \(identifier.text): \(inferred ?? "Int") = \(inferred != nil ? (initializer?.trimmedDescription ?? "0") : "0")"
        var fixIts: [FixIt] = []
        if let inferred {
            let pattern = binding.pattern.with(\.trailingTrivia, [])
            let annotated = binding
                .with(\.pattern, pattern)
                .with(\.typeAnnotation, TypeAnnotationSyntax(
                    colon: .colonToken(trailingTrivia: .space),
                    type: TypeSyntax(IdentifierTypeSyntax(name: .identifier(inferred, trailingTrivia: .space)))
                ))
            fixIts.append(FixIt(
                message: ModelFixIt("Add ': \(inferred)'"),
                changes: [.replace(oldNode: Syntax(binding), newNode: Syntax(annotated))]
            ))
        }
        return Diagnostic(node: binding.pattern, message: ModelDiagnostic.missingType(name, of: model, example: example), fixIts: fixIts)
    }

    /// The type of an initializer whose type is obvious from its spelling: literals and `Type()` calls.
    private static func inferredType(_ expression: ExprSyntax) -> String? {
        if expression.is(StringLiteralExprSyntax.self) { return "String" }
        if expression.is(IntegerLiteralExprSyntax.self) { return "Int" }
        if expression.is(FloatLiteralExprSyntax.self) { return "Double" }
        if expression.is(BooleanLiteralExprSyntax.self) { return "Bool" }
        if let prefix = expression.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-" {
            return inferredType(prefix.expression)
        }
        if let call = expression.as(FunctionCallExprSyntax.self),
           let callee = call.calledExpression.as(DeclReferenceExprSyntax.self),
           let first = callee.baseName.text.first, first.isUppercase {
            return callee.baseName.text
        }
        return nil
    }

    private static func isOptionalType(_ type: TypeSyntax) -> Bool {
        if type.is(OptionalTypeSyntax.self) || type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return true }
        if let identifier = type.as(IdentifierTypeSyntax.self) {
            return identifier.name.text == "Optional" && identifier.genericArgumentClause != nil
        }
        return false
    }

    static func plainName(_ identifier: TokenSyntax) -> String {
        identifier.identifier?.name ?? identifier.text
    }
}

/// What an accessor block makes of a property.
enum AccessorKind {
    /// `{ ... }` or `get`/`set`: no storage of its own.
    case computed
    /// Only `willSet`/`didSet`: still stored.
    case observers

    static func of(_ block: AccessorBlockSyntax) -> AccessorKind {
        switch block.accessors {
        case .getter:
            return .computed
        case .accessors(let list):
            let observing: Set<String> = ["willSet", "didSet"]
            return list.allSatisfy { observing.contains($0.accessorSpecifier.text) } ? .observers : .computed
        }
    }
}

extension AttributeListSyntax {
    /// The first `@Name(...)` whose last name component is one of `names` (`@PGModel.Transient` counts).
    func first(named names: Set<String>) -> AttributeSyntax? {
        for element in self {
            guard case .attribute(let attribute) = element else { continue }
            if let identifier = attribute.attributeName.as(IdentifierTypeSyntax.self), names.contains(identifier.name.text) {
                return attribute
            }
            if let member = attribute.attributeName.as(MemberTypeSyntax.self), names.contains(member.name.text) {
                return attribute
            }
        }
        return nil
    }

    func contains(named names: Set<String>) -> Bool { first(named: names) != nil }
}
