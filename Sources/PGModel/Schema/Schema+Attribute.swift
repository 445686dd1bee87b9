@_spi(PGModelInternals) import PGModelCore

extension Schema {
    /// An attribute of a model: its name and type, and the `@Attribute` options it was declared with.
    ///
    /// `@Attribute(...)` on a property makes one of these with the options only; the attributes a
    /// schema's entities list (``Schema/Entity/attributes``) also carry the property's name, type,
    /// optionality and default value.
    ///
    /// ```swift
    /// @Attribute(.unique) var name: String
    /// @Attribute(originalName: "start_date") var startDate: Date
    ///
    /// let name = schema.entitiesByName["Trip"]?.attributesByName["name"]
    /// name?.isUnique      // true
    /// name?.valueType     // String.self
    /// ```
    ///
    /// Unlike SwiftData's, its properties are read-only: a schema is made from the `@Model` classes.
    public final class Attribute: SchemaProperty, CustomStringConvertible, @unchecked Sendable {
        // @unchecked: every stored property is immutable; `defaultValue` is a value made once from the
        // class's default expression, and `valueType` a metatype.

        /// The Swift property name (empty for the options `@Attribute(...)` writes).
        public let name: String
        /// The `@Attribute` options.
        public let options: [Option]
        /// The declared Swift type, `Optional` included.
        public let valueType: any Any.Type
        /// The default value written in the class (`var rating = 3`), if any.
        public let defaultValue: Any?
        /// Changes the property's version hash without changing its name.
        public let hashModifier: String?
        /// The previous name given as `originalName:`, if any.
        let declaredOriginalName: String?

        /// The options of `@Attribute(...)`.
        ///
        /// ```swift
        /// let attribute = Schema.Attribute(.unique, originalName: "title")
        /// ```
        public init(_ options: Option..., originalName: String? = nil, hashModifier: String? = nil) {
            self.name = ""
            self.options = options
            self.valueType = Any.self
            self.defaultValue = nil
            self.hashModifier = hashModifier
            self.declaredOriginalName = originalName
        }

        /// A complete attribute description.
        ///
        /// ```swift
        /// let rating = Schema.Attribute(name: "rating", valueType: Int?.self, defaultValue: 3)
        /// rating.isOptional   // true
        /// ```
        public init(name: String, originalName: String? = nil, options: [Option] = [], valueType: any Any.Type,
                    defaultValue: Any? = nil, hashModifier: String? = nil) {
            self.name = name
            self.options = options
            self.valueType = valueType
            self.defaultValue = defaultValue
            self.hashModifier = hashModifier
            self.declaredOriginalName = originalName
        }

        /// The previous name (`originalName:`), or ``name`` when the property was never renamed.
        public var originalName: String { declaredOriginalName ?? name }
        /// Always true.
        public var isAttribute: Bool { true }
        /// Always false.
        public var isRelationship: Bool { false }
        /// Whether the value is tracked but never stored (`.ephemeral`).
        public var isTransient: Bool { options.contains(.ephemeral) }
        /// Whether the declared type is an `Optional`.
        public var isOptional: Bool { valueType is any OptionalValueType.Type }
        /// Whether the attribute has the `.unique` option: unique among its owner's models.
        public var isUnique: Bool { options.contains(.unique) }
        /// Whether the attribute has the `.globallyUnique` option: unique among every user's models.
        ///
        /// ```swift
        /// schema.entitiesByName["Member"]?.attributesByName["handle"]?.isGloballyUnique   // true
        /// ```
        public var isGloballyUnique: Bool { options.contains(.globallyUnique) }
        /// Whether the value is stored as the `Data` of a ``ValueTransformer`` (`.transformable(by:)`).
        public var isTransformable: Bool { transformer != nil }

        /// The transformer of `.transformable(by:)`, if any.
        public var transformer: ValueTransformer.Type? {
            options.lazy.compactMap { $0.transformer?.type }.first
        }

        public var description: String {
            "Attribute(name: \(name), options: \(options), valueType: \(valueType), isOptional: \(isOptional))"
        }

        public static func == (l: Attribute, r: Attribute) -> Bool {
            l.name == r.name && l.options == r.options && l.declaredOriginalName == r.declaredOriginalName
                && l.hashModifier == r.hashModifier && ObjectIdentifier(l.valueType) == ObjectIdentifier(r.valueType)
        }

        public func hash(into h: inout Hasher) {
            h.combine(name)
            h.combine(options)
            h.combine(declaredOriginalName)
            h.combine(hashModifier)
            h.combine(ObjectIdentifier(valueType))
        }
    }
}
