import SwiftSyntax
import SwiftSyntaxMacros

/// `@_PersistedProperty`, which `@Model` puts on every stored property it persists: moves the value
/// into a private `_name` peer and routes reads and writes through Observation and change tracking.
///
/// ```swift
/// var name: String
/// // becomes
/// var name: String {
///     @storageRestrictions(initializes: _name) init(initialValue) { _name = initialValue }
///     get { _$observationRegistrar.access(self, keyPath: \.name); return _name }
///     set { _$observationRegistrar.withMutation(of: self, keyPath: \.name) { _name = newValue }; self._$didChange("name") }
/// }
/// @Transient private var _name: String
/// ```
public struct PersistedPropertyMacro: AccessorMacro, PeerMacro {
    /// The property this macro can rewrite: one named, typed, stored `var`. Anything else is left
    /// alone; `@Model` has already diagnosed it.
    private struct Target {
        let identifier: String
        let name: String
        let type: TypeSyntax
    }

    private static func target(_ declaration: some DeclSyntaxProtocol) -> Target? {
        guard let variable = declaration.as(VariableDeclSyntax.self),
              variable.bindingSpecifier.tokenKind == .keyword(.var),
              variable.bindings.count == 1,
              let binding = variable.bindings.first,
              binding.accessorBlock == nil,
              let pattern = binding.pattern.as(IdentifierPatternSyntax.self),
              let type = binding.typeAnnotation?.type
        else { return nil }
        return Target(identifier: pattern.identifier.text, name: ModelMember.plainName(pattern.identifier), type: type.trimmed)
    }

    public static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let target = target(declaration) else { return [] }
        let storage = "_" + target.name
        // The init accessor lets user initializers (and default values) assign the property before
        // `self` is available, without counting as a change.
        return [
            """
            @storageRestrictions(initializes: \(raw: storage))
            init(initialValue) {
                \(raw: storage) = initialValue
            }
            """,
            """
            get {
                _$observationRegistrar.access(self, keyPath: \\.\(raw: target.identifier))
                return \(raw: storage)
            }
            """,
            """
            set {
                _$observationRegistrar.withMutation(of: self, keyPath: \\.\(raw: target.identifier)) {
                    \(raw: storage) = newValue
                }
                self._$didChange(\(literal: target.name))
            }
            """,
        ]
    }

    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let target = target(declaration) else { return [] }
        // No initializer: the property's default value, if any, reaches the storage through the init accessor.
        return ["@Transient private var \(raw: "_" + target.name): \(target.type)"]
    }
}
