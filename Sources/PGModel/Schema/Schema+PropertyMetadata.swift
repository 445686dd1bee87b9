@_spi(PGModelInternals) import PGModelCore

extension Schema {
    /// One stored property of a model, as `@Model` declares it in `schemaMetadata`.
    ///
    /// The macro writes these; you rarely do:
    /// ```swift
    /// static var schemaMetadata: [Schema.PropertyMetadata] {
    ///     [Schema.PropertyMetadata(name: "name", keypath: \Trip.name,
    ///                              codec: _AttributeCodecs.codec(String.self), metadata: Schema.Attribute(.unique))]
    /// }
    /// ```
    public struct PropertyMetadata: @unchecked Sendable {
        // @unchecked: key paths and the @Sendable closures below are immutable and thread-safe.
        /// The Swift property name.
        public let name: String
        /// The property's key path on the model type.
        public let keypath: AnyKeyPath
        /// For a non-final class, whose ``keypath`` is rooted at the class being described (a subclass
        /// included), the key path as written on the declaring class: compound key paths reuse its
        /// accessor, so sorts through relationships match it.
        public let declaredKeypath: AnyKeyPath?
        /// The `@Attribute` options, if any.
        public let metadata: Attribute?
        /// Column type and nullability.
        public let attributeType: AttributeType
        /// Whether the property is optional.
        public let isOptional: Bool
        /// The property's declared Swift type (`String`, `Optional<Date>`, `[Track]`).
        public let valueType: any Any.Type
        /// The Swift default value written in the class, made when asked (``Schema/Attribute/defaultValue``).
        let swiftDefault: () -> Any?
        /// Set for relationship properties; `attributeType` is then `.uuid` (a to-one's foreign key).
        public let relationship: RelationshipMetadata?
        /// Whether the attribute can wait unloaded (left out by `propertiesToFetch`) behind a placeholder.
        public let canBeFault: Bool
        /// Attributes: the stored form. To-one relationships: the related model's id (`.null` for none);
        /// reading it resolves a fault, so callers skip faulted keys. To-many: `nil`.
        /// Reads and writes the property on a model (``PropertyAccess``).
        let access: any PropertyAccess
        func read(_ model: any PersistentModel) -> PGValue? { access.read(model) }
        func write(_ model: any PersistentModel, _ stored: PGValue) throws { try access.write(model, stored) }
        /// The Swift value a stored value stands for (history tombstones read attributes without a model).
        let decodeStored: @Sendable (PGValue) throws -> Any
        /// The stored form of the default value written in the class, if any (see
        /// `AttributeDescription.defaultValue`).
        let storedDefault: () -> PGValue?

        /// Describes a stored property of `Model` whose values `codec` converts.
        public init<Model: PersistentModel, Value>(
            name: String,
            keypath: ReferenceWritableKeyPath<Model, Value>,
            codec: AttributeCodec<Value>,
            metadata: Attribute? = nil,
            declaredKeypath: AnyKeyPath? = nil,
            defaultValue: (() -> Value)? = nil
        ) {
            self.name = name
            self.keypath = keypath
            self.declaredKeypath = declaredKeypath
            self.metadata = metadata
            self.relationship = nil
            self.valueType = Value.self
            nonisolated(unsafe) let keypath = keypath
            // Evaluated when the schema is described, never per row: a migration fills existing rows with it.
            nonisolated(unsafe) let makeDefault = defaultValue
            self.swiftDefault = { makeDefault.flatMap { Self.unwrapped($0()) } }
            if let transformer = metadata?.transformer {
                self.storedDefault = {
                    guard let makeDefault else { return nil }
                    return (transformer.init().transformedValue(makeDefault()) as? Data).map(PGValue.data)
                }
                // The transformer's Data is what is stored; the static codec is not used.
                self.attributeType = .data
                self.isOptional = true
                self.isUnsupported = false
                self.canBeFault = true
                self.access = TransformedAttributeAccess(name: name, keypath: keypath, transformer: transformer)
                self.decodeStored = { try Self.reverse($0, with: transformer, as: Value.self, name: name) }
                return
            }
            self.attributeType = codec.attributeType
            self.isOptional = codec.isOptional
            self.isUnsupported = codec.isUnsupported
            self.storedDefault = {
                guard let makeDefault else { return nil }
                let value = codec.encode(makeDefault())
                return value.isNull ? nil : value
            }
            self.canBeFault = codec.placeholder != nil
            self.access = AttributeAccess(name: name, keypath: keypath, codec: codec)
            self.decodeStored = { try codec.decode($0) }
        }

        /// Describes a relationship property of `Model`.
        public init<Model: PersistentModel, Value>(
            name: String,
            keypath: ReferenceWritableKeyPath<Model, Value>,
            codec: RelationshipCodec<Value>,
            metadata: Relationship? = nil,
            declaredKeypath: AnyKeyPath? = nil,
            defaultValue: (() -> Value)? = nil
        ) {
            // A relationship's default (`= []`) is not stored: its rows are the related models.
            self.storedDefault = { nil }
            self.swiftDefault = { nil }
            self.valueType = Value.self
            self.name = name
            self.keypath = keypath
            self.declaredKeypath = declaredKeypath
            self.metadata = nil
            self.isUnsupported = false
            self.canBeFault = true
            self.attributeType = .uuid
            self.isOptional = codec.isOptional || codec.isToMany
            nonisolated(unsafe) let keypath = keypath
            let access = RelationshipAccess(name: name, keypath: keypath, codec: codec)
            self.relationship = RelationshipMetadata(
                destination: codec.destination, isToMany: codec.isToMany, isOptional: codec.isOptional, options: metadata,
                access: access)
            self.access = access
            let message = "relationship '\(name)' of \(Model.self) has no stored value of its own"
            self.decodeStored = { _ in throw PGModelError(.typeMismatch, message, keyPath: name) }
        }

        /// The value a transformer's reverse transformation makes of stored `Data`.
        static func reverse<Value>(_ stored: PGValue, with transformer: ValueTransformer.Type, as: Value.Type, name: String) throws -> Value {
            let input: Data? = if case .data(let data) = stored { data } else { nil }
            let output = transformer.init().reverseTransformedValue(input)
            if let value = output as? Value { return value }
            if let optional = Optional<Any>.none as? Value, output == nil { return optional }
            throw PGModelError(.typeMismatch, "the transformer of '\(name)' did not produce a \(Value.self)", keyPath: name)
        }

        /// `value` without its `Optional` layers: nil for `Optional.none`, so `var rating: Int? = nil`
        /// has no default value rather than an `Any` holding nil.
        static func unwrapped(_ value: Any) -> Any? {
            let mirror = Mirror(reflecting: value)
            guard mirror.displayStyle == .optional else { return value }
            return mirror.children.first.flatMap { unwrapped($0.value) }
        }

        /// Whether this is a relationship rather than an attribute.
        public var isRelationship: Bool { relationship != nil }

        var attributeDescription: AttributeDescription {
            let options = metadata?.options ?? []
            return AttributeDescription(
                name: name,
                type: attributeType,
                isOptional: isOptional,
                isUnique: options.contains(.unique),
                isGloballyUnique: options.contains(.globallyUnique),
                originalName: metadata?.declaredOriginalName,
                isOpaque: options.contains(.codable),
                isExternal: options.contains(.externalStorage),
                preservesValueOnDeletion: options.contains(.preserveValueOnDeletion),
                hashModifier: metadata?.hashModifier,
                defaultValue: storedDefault()
            )
        }

        /// `@Attribute(.merge(…))`: how this attribute merges when two saves change it at once.
        public var mergeRule: MergeRule? { metadata?.options.lazy.compactMap(\.mergeRule).first }
        /// `@Attribute(.ephemeral)`: tracked, never stored.
        public var isEphemeral: Bool { metadata?.options.contains(.ephemeral) ?? false }
        /// `@Attribute(.externalStorage)`.
        public var isExternal: Bool { metadata?.options.contains(.externalStorage) ?? false }
        /// A type PGModel cannot store without `.transformable(by:)`.
        public let isUnsupported: Bool
    }

    /// What PGModel knows about a relationship property.
    public struct RelationshipMetadata: @unchecked Sendable {
        // @unchecked: a model metatype (immutable; see `Schema.types`).
        /// The declared destination class.
        public let destination: any PersistentModel.Type
        public let isToMany: Bool
        public let isOptional: Bool
        /// `@Relationship`'s options, if the property has them.
        public let options: Relationship?
        /// Follows the relationship on a model (``RelationshipPropertyAccess``).
        let access: any RelationshipPropertyAccess
        /// The related models (reads through the property: resolves a fault).
        func models(_ model: any PersistentModel) -> [any PersistentModel] { access.models(model) }
        /// The related models in a value of the property's type (`_$didChange(_:from:to:)` passes them).
        func modelsOfValue(_ value: Any) -> [any PersistentModel]? { access.modelsOfValue(value) }
        /// Sets the property to hold exactly `related`.
        func assign(_ model: any PersistentModel, _ related: [any PersistentModel]) throws { try access.assign(model, related) }
    }
}
