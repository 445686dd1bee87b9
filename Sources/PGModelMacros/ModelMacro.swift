import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Model`: turns a class into a `PersistentModel`.
///
/// - member role: backing data, the observation registrar, `init(backingData:)` and its mirror
///   `_$readStoredValues(into:)`, `schemaMetadata`, and the `#Unique` / `#Index` groups; it also emits
///   every diagnostic about the class's members.
///   Non-final classes get overridable `class var`s and subclasses override them (see ``ModelInheritance``).
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
            persisted: persisted, notPersisted: otherNames.subtracting(persistedNames)
        )
        constraints.diagnostics.forEach(context.diagnose)

        let access = accessPrefix(of: model)
        let inheritance = ModelInheritance(of: model, missingConformances: protocols)
        let unassigned = unassignedNames(of: model, persisted)
        let own = metadataEntries(persisted, root: className)
        // Non-final classes build their metadata with key paths rooted at the dynamic class (`Self`), so
        // `\BusinessTrip.name` — a different key path from `\Trip.name` — names the inherited property
        // in a subclass's predicates and sorts.
        let rootedName = "_$schemaMetadata_" + className
        let rooted: DeclSyntax = """
            \(raw: access)static func \(raw: rootedName)<Root: \(raw: className)>(rootedAt _: Root.Type) -> [PGModel.Schema.PropertyMetadata] {
            \(raw: metadataEntries(persisted, root: "Root", declaredOn: className))
            }
            """
        switch inheritance {
        case .root(isFinal: true):
            // Nothing can override a final class's members, so they stay `static` and the protocol's
            // defaults cover absent constraints. `_$backingData` is `lazy`: a fetched instance's
            // `init(backingData:)` sets it, and would otherwise first build a default one to discard.
            var members: [DeclSyntax] = [
                "@Transient \(raw: access)lazy var _$backingData = PGModel.ModelBackingData()",
                registrar,
                initializer(persisted, access: access, callsSuper: false),
                storedValueReader(persisted, prefix: access, callsSuper: false, unassigned: unassigned),
                "\(raw: access)static var schemaMetadata: [PGModel.Schema.PropertyMetadata] {\n\(raw: own)\n}",
            ]
            if constraints.hasUniqueness {
                members.append("\(raw: access)static var _$uniquenessConstraints: [[String]] { \(raw: literal(constraints.uniqueness)) }")
            }
            if constraints.hasGlobalUniqueness {
                members.append("\(raw: access)static var _$globalUniquenessConstraints: [[String]] { \(raw: literal(constraints.globalUniqueness)) }")
            }
            if constraints.hasIndexes {
                members.append("\(raw: access)static var _$indexes: [PGModel.Schema.IndexMetadata] { \(raw: literal(constraints.indexes)) }")
            }
            return members

        case .root(isFinal: false):
            // Subclasses override these, so they are `class var`s, the constraint lists included: a
            // subclass's `super._$indexes` must name a member of this class, not the protocol's default.
            let overridable = overridablePrefix(of: model, access: access)
            return [
                "@Transient \(raw: access)lazy var _$backingData = PGModel.ModelBackingData()",
                registrar,
                initializer(persisted, access: access, callsSuper: false, restoresSubclasses: true),
                storedValueReader(persisted, prefix: overridable, callsSuper: false, unassigned: unassigned),
                "\(raw: overridable)func _$restoreInheritingValues(from backingData: PGModel.ModelBackingData) throws {}",
                rooted,
                "\(raw: overridable)class var schemaMetadata: [PGModel.Schema.PropertyMetadata] {\n\(raw: rootedName)(rootedAt: Self.self)\n}",
                "\(raw: overridable)class var _$uniquenessConstraints: [[String]] { \(raw: literal(constraints.uniqueness)) }",
                "\(raw: overridable)class var _$globalUniquenessConstraints: [[String]] { \(raw: literal(constraints.globalUniqueness)) }",
                "\(raw: overridable)class var _$indexes: [PGModel.Schema.IndexMetadata] { \(raw: literal(constraints.indexes)) }",
                "\(raw: overridable)class var _$superentity: (any PGModel.PersistentModel.Type)? { nil }",
            ]

        case .subclass(let superclass):
            // The superclass owns `_$backingData`. The registrar is private to each class, so each level
            // declares its own for the accessors it generates.
            let overridable = overridablePrefix(of: model, access: access) + "override "
            let metadata = persisted.isEmpty ? "super.schemaMetadata" : "super.schemaMetadata + \(rootedName)(rootedAt: Self.self)"
            // A subclass that declares no designated initializer inherits its superclass's (the seed's
            // `class BusinessTrip: Trip { var perdiem: Double = 0.0 }`): generating `init(backingData:)`
            // would take that inheritance away, so its values are restored by an override instead. Its
            // properties without a default value (the seed's `class PersonalTrip: Trip { var reason: Reason }`)
            // are unassigned until set (`unassignedNames`), as in SwiftData.
            let restoring: DeclSyntax
            if declaresDesignatedInitializer(model) {
                restoring = initializer(persisted, access: access, callsSuper: true)
            } else {
                restoring = restoringOverride(persisted, overridable: overridable)
            }
            var members: [DeclSyntax] = [registrar, restoring]
            // Without properties of its own, the superclass's reader reads everything.
            if !persisted.isEmpty {
                members.append(storedValueReader(persisted, prefix: overridable, callsSuper: true, unassigned: unassigned))
            }
            members += [
                rooted,
                "\(raw: overridable)class var schemaMetadata: [PGModel.Schema.PropertyMetadata] {\n\(raw: metadata)\n}",
                "\(raw: overridable)class var _$superentity: (any PGModel.PersistentModel.Type)? { \(raw: superclass).self }",
            ]
            if constraints.hasUniqueness {
                members.append("\(raw: overridable)class var _$uniquenessConstraints: [[String]] { super._$uniquenessConstraints + \(raw: literal(constraints.uniqueness)) }")
            }
            if constraints.hasGlobalUniqueness {
                members.append("\(raw: overridable)class var _$globalUniquenessConstraints: [[String]] { super._$globalUniquenessConstraints + \(raw: literal(constraints.globalUniqueness)) }")
            }
            if constraints.hasIndexes {
                members.append("\(raw: overridable)class var _$indexes: [PGModel.Schema.IndexMetadata] { super._$indexes + \(raw: literal(constraints.indexes)) }")
            }
            return members
        }
    }

    /// `lazy`: a registrar allocates its state when made, and most models (a bulk insert's, a large
    /// fetch's) are never observed; the first property read or write makes it.
    private static let registrar: DeclSyntax = "@Transient private lazy var _$observationRegistrar = Observation.ObservationRegistrar()"

    /// Fetched instances are built from stored values; the user's initializer never runs for them.
    /// A subclass sets its own properties, then lets its superclass set the inherited ones.
    private static func initializer(_ properties: [PersistedProperty], access: String, callsSuper: Bool,
                                    restoresSubclasses: Bool = false) -> DeclSyntax {
        var lines: [String] = []
        for property in properties {
            lines.append("self._\(property.name) = try backingData.value(forKey: \(stringLiteral(property.name)), codec: \(codec(property)))")
        }
        lines.append(callsSuper ? "try super.init(backingData: backingData)" : "self._$backingData = backingData")
        if restoresSubclasses {
            // Subclasses that inherit this initializer set their own values here, once every stored
            // property holds a value.
            lines.append("try self._$restoreInheritingValues(from: backingData)")
        }
        // `required`: the protocol requirement must hold for subclasses of a non-final class too.
        return """
            \(raw: access)required init(backingData: PGModel.ModelBackingData) throws {
            \(raw: lines.joined(separator: "\n"))
            }
            """
    }

    /// `_$readStoredValues(into:)`: each persisted property's storage read with the codec its type picks,
    /// in declaration order, the superclass's first (the order of `schemaMetadata`).
    private static func storedValueReader(_ properties: [PersistedProperty], prefix: String, callsSuper: Bool,
                                          unassigned: Set<String>) -> DeclSyntax {
        var lines = callsSuper ? ["super._$readStoredValues(into: &reader)"] : []
        lines += properties.map { property in
            unassigned.contains(property.name)
                ? "reader.read(unassigned: self._\(property.name), \(codec(property)))"
                : "reader.read(self._\(property.name), \(codec(property)))"
        }
        let signature = "\(prefix)func _$readStoredValues(into reader: inout PGModel._StoredValueReader)"
        guard !lines.isEmpty else { return "\(raw: signature) {}" }
        return """
            \(raw: signature) {
            \(raw: lines.joined(separator: "\n"))
            }
            """
    }

    /// A subclass without initializers of its own: its values are set after the inherited
    /// `init(backingData:)` has run, then its superclass's (an intermediate class may inherit too).
    private static func restoringOverride(_ properties: [PersistedProperty], overridable: String) -> DeclSyntax {
        var lines = properties.map { property in
            "self._\(property.name) = try backingData.value(forKey: \(stringLiteral(property.name)), codec: \(codec(property)))"
        }
        lines.append("try super._$restoreInheritingValues(from: backingData)")
        return """
            \(raw: overridable)func _$restoreInheritingValues(from backingData: PGModel.ModelBackingData) throws {
            \(raw: lines.joined(separator: "\n"))
            }
            """
    }

    /// The properties stored as `T?` that start unassigned (`@_PersistedProperty(unassigned: true)`): those
    /// without a default value in a subclass that declares no designated initializer. Swift lets such a
    /// subclass inherit its superclass's initializers only when every stored property starts with a value,
    /// and SwiftData's models do inherit them. Decided from syntax alone (the member-attribute role is
    /// not told the class's conformances), so both roles agree on it.
    static func unassignedNames(of model: ClassDeclSyntax, _ persisted: [PersistedProperty]) -> Set<String> {
        guard ModelInheritance(of: model, missingConformances: []).isSubclass, !declaresDesignatedInitializer(model) else { return [] }
        return Set(persisted.lazy.filter { !$0.hasInitialValue }.map(\.name))
    }

    /// Whether the class body declares a designated initializer (convenience ones keep inheritance).
    private static func declaresDesignatedInitializer(_ model: ClassDeclSyntax) -> Bool {
        model.memberBlock.members.contains { item in
            guard let initializer = item.decl.as(InitializerDeclSyntax.self) else { return false }
            return !initializer.modifiers.contains { $0.name.tokenKind == .keyword(.convenience) }
        }
    }

    /// The class's own properties as an array literal of `PropertyMetadata`.
    private static func metadataEntries(_ properties: [PersistedProperty], root: String, declaredOn declaring: String? = nil) -> String {
        let entries = properties.map { property in
            var entry = "PGModel.Schema.PropertyMetadata(name: \(stringLiteral(property.name)), keypath: \\\(root).\(property.identifier), codec: \(codec(property))"
            switch property.metadata {
            case .attribute(let arguments):
                entry += ", metadata: PGModel.Schema.Attribute(\(arguments.trimmedDescription))"
            case .relationship(let arguments):
                entry += ", metadata: PGModel.Schema.Relationship(\(arguments.trimmedDescription))"
            case nil:
                break
            }
            if let declaring {
                entry += ", declaredKeypath: \\\(declaring).\(property.identifier)"
            }
            if let value = property.defaultValue {
                entry += ", defaultValue: { \(value.trimmedDescription) }"
            }
            return entry + ")"
        }
        return entries.isEmpty ? "[]" : "[\n" + entries.joined(separator: ",\n") + "\n]"
    }

    /// The overloads of `_AttributeCodecs.codec` pick the conversion from the static type, so the macro
    /// never has to know whether a named type is a supported value type, a raw-value enum or a model.
    private static func codec(_ property: PersistedProperty) -> String {
        "PGModel._AttributeCodecs.codec(\(property.type.trimmedDescription).self)"
    }

    private static func literal(_ groups: [[String]]) -> String {
        "[" + groups.map { "[" + $0.map(stringLiteral).joined(separator: ", ") + "]" }.joined(separator: ", ") + "]"
    }

    /// `[.binary(["name"]), .rtree(["latitude", "longitude"])]`: `Schema.IndexMetadata` values.
    private static func literal(_ groups: [IndexGroup]) -> String {
        "[" + groups.map { ".\($0.kind)([" + $0.names.map(stringLiteral).joined(separator: ", ") + "])" }.joined(separator: ", ") + "]"
    }

    private static func stringLiteral(_ text: String) -> String {
        StringLiteralExprSyntax(content: text).description
    }

    /// Members a subclass overrides: `open` in an open class, so subclasses in other modules can.
    private static func overridablePrefix(of model: ClassDeclSyntax, access: String) -> String {
        model.modifiers.contains { $0.name.tokenKind == .keyword(.open) } ? "open " : access
    }

    /// Generated members must be as visible as the conformance: public for a public or open class.
    private static func accessPrefix(of model: ClassDeclSyntax) -> String {
        GeneratedAccess.prefix(for: model.modifiers)
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
        if !unassignedNames(of: model, [property]).isEmpty {
            return ["@_PersistedProperty(unassigned: true)"]
        }
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
        // One extension per protocol the class does not conform to yet; none for a subclass, which
        // inherits both conformances (the compiler passes no protocols then). PersistentModel refines
        // Observable, but the compiler still wants every listed conformance spelled out, as SwiftData does.
        let qualified = ["PersistentModel": isolation + "PGModel.PersistentModel", "Observable": "Observation.Observable"]
        var extensions: [ExtensionDeclSyntax] = []
        for proto in protocols {
            guard let name = qualified[ModelInheritance.lastComponent(of: proto)] else { continue }
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
}
