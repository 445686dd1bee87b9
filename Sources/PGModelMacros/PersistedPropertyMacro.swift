import SwiftSyntax
import SwiftSyntaxMacros

/// `@_PersistedProperty`, which `@Model` puts on every stored property it persists: moves the value
/// into a private `_name` peer and routes reads and writes through Observation and change tracking.
///
/// Every persisted property gets the same accessors, attribute or relationship: whether `Album?` is a
/// model cannot be told from syntax, so the runtime's overloads of `_$willRead` and
/// `_$didChange(_:from:to:)` decide by the property's type.
///
/// ```swift
/// var album: Album?
/// // becomes
/// var album: Album? {
///     @storageRestrictions(initializes: _album) init(initialValue) { _album = initialValue }
///     get { _$observationRegistrar.access(self, keyPath: \.album); self._$willRead("album"); return _album }
///     set {
///         self._$willRead("album"); let oldValue = _album
///         _$observationRegistrar.withMutation(of: self, keyPath: \.album) { _album = newValue }
///         self._$didChange("album", from: oldValue, to: newValue)
///     }
/// }
/// @Transient private var _album: Optional<Album>
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

    /// `@_PersistedProperty(unassigned: true)`: the storage is optional and starts empty, so a subclass
    /// with this property and no initializer still inherits its superclass's initializers.
    static func isUnassigned(_ node: AttributeSyntax) -> Bool {
        guard case .argumentList(let arguments) = node.arguments else { return false }
        return arguments.contains { argument in
            argument.label?.text == "unassigned" && argument.expression.as(BooleanLiteralExprSyntax.self)?.literal.tokenKind == .keyword(.true)
        }
    }

    public static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let target = target(declaration) else { return [] }
        let storage = "_" + target.name
        if isUnassigned(node) {
            // The storage is `T?`: the getter has no `T` to return while it is empty, and the change is
            // recorded between two optionals (nil the first time it is assigned).
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
                    self._$willRead(\(literal: target.name))
                    guard let value = \(raw: storage) else { PGModel._unassignedPropertyRead(\(literal: target.name), of: Self.self) }
                    return value
                }
                """,
                """
                set {
                    self._$willRead(\(literal: target.name))
                    let oldValue = \(raw: storage)
                    _$observationRegistrar.withMutation(of: self, keyPath: \\.\(raw: target.identifier)) {
                        \(raw: storage) = newValue
                    }
                    self._$didChange(\(literal: target.name), from: oldValue, to: Optional(newValue))
                }
                """,
            ]
        }
        // The init accessor lets user initializers (and default values) assign the property before
        // `self` is available, without counting as a change. `_$willRead` resolves a value the store has
        // not loaded yet (a fault); the setter needs it too, so `oldValue` is the real previous value
        // that `_$didChange` uses to update the old related model's inverse.
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
                self._$willRead(\(literal: target.name))
                return \(raw: storage)
            }
            """,
            """
            set {
                self._$willRead(\(literal: target.name))
                let oldValue = \(raw: storage)
                _$observationRegistrar.withMutation(of: self, keyPath: \\.\(raw: target.identifier)) {
                    \(raw: storage) = newValue
                }
                self._$didChange(\(literal: target.name), from: oldValue, to: newValue)
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
        if isUnassigned(node) {
            return ["@Transient private var \(raw: "_" + target.name): \(target.type)? = nil"]
        }
        // No initializer: the property's default value, if any, reaches the storage through the init accessor.
        return ["@Transient private var \(raw: "_" + target.name): \(storageType(of: target.type))"]
    }

    /// The storage's type: the property's, with `T?` spelled `Optional<T>`. Swift gives a stored `T?`
    /// an implicit `nil` before the initializer runs, and then never runs the property's init accessor
    /// with its default value: `var bucketList: [Item]? = []` would start as `nil`, and every
    /// `bucketList?.append(item)` would do nothing. A spelled-out `Optional` has no implicit value.
    static func storageType(of type: TypeSyntax) -> TypeSyntax {
        guard let optional = type.as(OptionalTypeSyntax.self) else { return type }
        return "Optional<\(optional.wrappedType.trimmed)>"
    }
}
