import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Model`: turns a class into a `PersistentModel`.
///
/// - member role: backing data, the observation registrar, `init(backingData:)`, `schemaMetadata`,
///   and the `#Unique` / `#Index` groups; it also emits every diagnostic about the class's members.
/// - member-attribute role: `@_PersistedProperty` on each stored property PGModel persists.
/// - extension role: the `PersistentModel` conformance.
public struct ModelMacro {}

extension ModelMacro: MemberMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let model = declaration.as(ClassDeclSyntax.self) else {
            context.diagnose(notAClassDiagnostic(node: node, declaration: declaration))
            return []
        }
        let className = model.name.text
        var persisted: [PersistedProperty] = []
        var persistedNames: Set<String> = []
        var otherNames: Set<String> = []
        for item in model.memberBlock.members {
            switch ModelMember.classify(item.decl, in: className) {
            case .persisted(let property):
                persisted.append(property)
                persistedNames.insert(property.name)
            case .invalid(let diagnostics):
                diagnostics.forEach(context.diagnose)
            case .ignored:
                break
            }
            if let variable = item.decl.as(VariableDeclSyntax.self) {
                for binding in variable.bindings {
                    if let identifier = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier {
                        otherNames.insert(ModelMember.plainName(identifier))
                    }
                }
            }
        }
        let constraints = ConstraintGroups(
            members: model.memberBlock.members, model: className,
            persisted: persistedNames, notPersisted: otherNames.subtracting(persistedNames)
        )
        constraints.diagnostics.forEach(context.diagnose)

        let access = accessPrefix(of: model)
        var members: [DeclSyntax] = [
            "@Transient \(raw: access)var _$backingData = PGModel.ModelBackingData()",
            "@Transient private let _$observationRegistrar = Observation.ObservationRegistrar()",
            initializer(persisted, access: access),
            schemaMetadata(persisted, className: className, access: access),
        ]
        if constraints.hasUniqueness {
            members.append("\(raw: access)static var _$uniquenessConstraints: [[String]] { \(raw: literal(constraints.uniqueness)) }")
        }
        if constraints.hasIndexes {
            members.append("\(raw: access)static var _$indexes: [[String]] { \(raw: literal(constraints.indexes)) }")
        }
        return members
    }

    /// Fetched instances are built from stored values; the user's initializer never runs for them.
    private static func initializer(_ properties: [PersistedProperty], access: String) -> DeclSyntax {
        var body = ""
        for property in properties {
            body += "self._\(property.name) = try backingData.value(forKey: \(stringLiteral(property.name)), codec: \(codec(property)))\n"
        }
        body += "self._$backingData = backingData"
        // `required`: the protocol requirement must hold for subclasses of a non-final class too.
        return """
            \(raw: access)required init(backingData: PGModel.ModelBackingData) throws {
            \(raw: body)
            }
            """
    }

    private static func schemaMetadata(_ properties: [PersistedProperty], className: String, access: String) -> DeclSyntax {
        let entries = properties.map { property in
            var entry = "PGModel.Schema.PropertyMetadata(name: \(stringLiteral(property.name)), keypath: \\\(className).\(property.identifier), codec: \(codec(property))"
            if let arguments = property.attributeArguments {
                entry += ", metadata: PGModel.Schema.Attribute(\(arguments.trimmedDescription))"
            }
            return entry + ")"
        }
        let list = entries.isEmpty ? "[]" : "[\n" + entries.joined(separator: ",\n") + "\n]"
        return """
            \(raw: access)static var schemaMetadata: [PGModel.Schema.PropertyMetadata] {
            \(raw: list)
            }
            """
    }

    /// The overloads of `_AttributeCodecs.codec` pick the conversion from the static type, so the macro
    /// never has to know whether a named type is a supported value type or a raw-value enum.
    private static func codec(_ property: PersistedProperty) -> String {
        "PGModel._AttributeCodecs.codec(\(property.type.trimmedDescription).self)"
    }

    private static func literal(_ groups: [[String]]) -> String {
        "[" + groups.map { "[" + $0.map(stringLiteral).joined(separator: ", ") + "]" }.joined(separator: ", ") + "]"
    }

    private static func stringLiteral(_ text: String) -> String {
        StringLiteralExprSyntax(content: text).description
    }

    /// Generated members must be as visible as the conformance: public for a public or open class.
    private static func accessPrefix(of model: ClassDeclSyntax) -> String {
        for modifier in model.modifiers {
            switch modifier.name.tokenKind {
            case .keyword(.public), .keyword(.open): return "public "
            case .keyword(.package): return "package "
            default: continue
            }
        }
        return ""
    }

    private static func notAClassDiagnostic(node: AttributeSyntax, declaration: some DeclGroupSyntax) -> Diagnostic {
        let kind: String
        var fixIts: [FixIt] = []
        if let structDecl = declaration.as(StructDeclSyntax.self) {
            kind = "struct"
            let keyword = structDecl.structKeyword
            let replacement = TokenSyntax(
                .identifier("final class"), leadingTrivia: keyword.leadingTrivia, trailingTrivia: keyword.trailingTrivia, presence: .present
            )
            fixIts.append(FixIt(
                message: ModelFixIt("Replace 'struct' with 'final class'"),
                changes: [.replace(oldNode: Syntax(keyword), newNode: Syntax(replacement))]
            ))
        } else if declaration.is(EnumDeclSyntax.self) {
            kind = "enum"
        } else if declaration.is(ActorDeclSyntax.self) {
            kind = "actor"
        } else if declaration.is(ProtocolDeclSyntax.self) {
            kind = "protocol"
        } else if declaration.is(ExtensionDeclSyntax.self) {
            kind = "extension"
        } else {
            kind = "declaration"
        }
        return Diagnostic(node: node, message: ModelDiagnostic.notAClass(kind), fixIts: fixIts)
    }
}

extension ModelMacro: MemberAttributeMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        guard let model = declaration.as(ClassDeclSyntax.self) else { return [] }
        // Invalid properties are left as they are: the member role has explained why, and rewriting
        // them would only add follow-on errors.
        guard case .persisted(let property) = ModelMember.classify(member, in: model.name.text),
              !property.isAlreadyPersisted
        else { return [] }
        return ["@_PersistedProperty"]
    }
}

extension ModelMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let model = declaration.as(ClassDeclSyntax.self) else { return [] }
        // The members of a `@MainActor` class are isolated, so its PersistentModel conformance can only
        // be an isolated one (usable on that actor), as with SwiftData under Swift 6.
        let isolation = globalActor(of: model).map { "@\($0) " } ?? ""
        // One extension per protocol the class does not conform to yet. PersistentModel refines
        // Observable, but the compiler still wants every listed conformance spelled out, as SwiftData does.
        let qualified = ["PersistentModel": isolation + "PGModel.PersistentModel", "Observable": "Observation.Observable"]
        var extensions: [ExtensionDeclSyntax] = []
        for proto in protocols {
            guard let name = qualified[lastComponent(of: proto)] else { continue }
            let decl: DeclSyntax = "extension \(type.trimmed): \(raw: name) {}"
            if let ext = decl.as(ExtensionDeclSyntax.self) { extensions.append(ext) }
        }
        return extensions
    }

    /// `MainActor` for `@MainActor class`; any argument-less attribute named `…Actor` is taken for a
    /// global actor, since attributes cannot be resolved syntactically.
    private static func globalActor(of model: ClassDeclSyntax) -> String? {
        for element in model.attributes {
            guard case .attribute(let attribute) = element, attribute.arguments == nil else { continue }
            let name = attribute.attributeName.trimmedDescription
            if name.hasSuffix("Actor") { return name }
        }
        return nil
    }

    private static func lastComponent(of type: TypeSyntax) -> String {
        if let member = type.as(MemberTypeSyntax.self) { return member.name.text }
        if let identifier = type.as(IdentifierTypeSyntax.self) { return identifier.name.text }
        return type.trimmedDescription
    }
}
