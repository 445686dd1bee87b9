import PGModelCore

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
        /// Set for relationship properties; `attributeType` is then `.uuid` (a to-one's foreign key).
        public let relationship: RelationshipMetadata?
        /// Whether the attribute can wait unloaded (left out by `propertiesToFetch`) behind a placeholder.
        public let canBeFault: Bool
        /// Attributes: the stored form. To-one relationships: the related model's id (`.null` for none);
        /// reading it resolves a fault, so callers skip faulted keys. To-many: `nil`.
        let read: @Sendable (any PersistentModel) -> PGValue?
        let write: @Sendable (any PersistentModel, PGValue) throws -> Void
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
            nonisolated(unsafe) let keypath = keypath
            // Evaluated when the schema is described, never per row: a migration fills existing rows with it.
            nonisolated(unsafe) let makeDefault = defaultValue
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
                self.read = { model in
                    guard let model = model as? Model else { return nil }
                    return (transformer.init().transformedValue(model[keyPath: keypath]) as? Data).map(PGValue.data) ?? .null
                }
                self.write = { model, stored in
                    guard let model = model as? Model else { return }
                    model[keyPath: keypath] = try Self.reverse(stored, with: transformer, as: Value.self, name: name)
                }
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
            self.read = { model in
                guard let model = model as? Model else { return nil }
                return codec.encode(model[keyPath: keypath])
            }
            self.write = { model, stored in
                guard let model = model as? Model else {
                    throw PGModelError(.internalError, "property '\(name)' of \(Model.self) written on a \(type(of: model))")
                }
                model[keyPath: keypath] = try codec.decode(stored)
            }
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
            self.name = name
            self.keypath = keypath
            self.declaredKeypath = declaredKeypath
            self.metadata = nil
            self.isUnsupported = false
            self.canBeFault = true
            self.attributeType = .uuid
            self.isOptional = codec.isOptional || codec.isToMany
            nonisolated(unsafe) let keypath = keypath
            self.relationship = RelationshipMetadata(
                destination: codec.destination, isToMany: codec.isToMany, isOptional: codec.isOptional, options: metadata,
                models: { model in
                    guard let model = model as? Model else { return [] }
                    return codec.models(model[keyPath: keypath])
                },
                modelsOfValue: { value in
                    guard let value = value as? Value else { return nil }
                    return codec.models(value)
                },
                assign: { model, related in
                    guard let model = model as? Model else {
                        throw PGModelError(.internalError, "relationship '\(name)' of \(Model.self) written on a \(type(of: model))")
                    }
                    guard let value = codec.make(related) else {
                        throw PGModelError(.typeMismatch, "relationship '\(name)' of \(Model.self) cannot hold \(related.map { "\(type(of: $0))" })", model: "\(Model.self)", keyPath: name)
                    }
                    model[keyPath: keypath] = value
                })
            self.read = { model in
                guard !codec.isToMany, let model = model as? Model else { return nil }
                return codec.models(model[keyPath: keypath]).first.map { .uuid($0._$backingData.id) } ?? .null
            }
            self.write = { _, _ in
                throw PGModelError(.internalError, "relationship '\(name)' of \(Model.self) is not written from a stored value")
            }
            self.decodeStored = { stored in
                throw PGModelError(.typeMismatch, "relationship '\(name)' of \(Model.self) has no stored value of its own", keyPath: name)
            }
        }

        /// The value a transformer's reverse transformation makes of stored `Data`.
        static func reverse<Value>(_ stored: PGValue, with transformer: ValueTransformer.Type, as: Value.Type, name: String) throws -> Value {
            let input: Data? = if case .data(let data) = stored { data } else { nil }
            let output = transformer.init().reverseTransformedValue(input)
            if let value = output as? Value { return value }
            if let optional = Optional<Any>.none as? Value, output == nil { return optional }
            throw PGModelError(.typeMismatch, "the transformer of '\(name)' did not produce a \(Value.self)", keyPath: name)
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
                originalName: metadata?.originalName,
                isOpaque: options.contains(.codable),
                isExternal: options.contains(.externalStorage),
                preservesValueOnDeletion: options.contains(.preserveValueOnDeletion),
                hashModifier: metadata?.hashModifier,
                defaultValue: storedDefault()
            )
        }

        /// `@Attribute(.ephemeral)`: tracked, never stored.
        public var isEphemeral: Bool { metadata?.options.contains(.ephemeral) ?? false }
        /// `@Attribute(.externalStorage)`.
        public var isExternal: Bool { metadata?.options.contains(.externalStorage) ?? false }
        /// A type PGModel cannot store without `.transformable(by:)`.
        public let isUnsupported: Bool
    }

    /// What PGModel knows about a relationship property.
    public struct RelationshipMetadata: @unchecked Sendable {
        // @unchecked: a metatype and @Sendable closures.
        /// The declared destination class.
        public let destination: any PersistentModel.Type
        public let isToMany: Bool
        public let isOptional: Bool
        /// `@Relationship`'s options, if the property has them.
        public let options: Relationship?
        /// The related models (reads through the property: resolves a fault).
        let models: @Sendable (any PersistentModel) -> [any PersistentModel]
        /// The related models in a value of the property's type (`_$didChange(_:from:to:)` passes them).
        let modelsOfValue: @Sendable (Any) -> [any PersistentModel]?
        /// Sets the property to hold exactly `related`.
        let assign: @Sendable (any PersistentModel, [any PersistentModel]) throws -> Void
    }

    /// `@Attribute` options of a property.
    ///
    /// ```swift
    /// @Attribute(.unique) var name: String
    /// @Attribute(originalName: "start_date") var startDate: Date
    /// ```
    public struct Attribute: Hashable, Sendable {
        public var options: [Option]
        public var originalName: String?
        public var hashModifier: String?

        public init(_ options: Option..., originalName: String? = nil, hashModifier: String? = nil) {
            self.options = options
            self.originalName = originalName
            self.hashModifier = hashModifier
        }

        /// The transformer of `.transformable(by:)`, if any.
        public var transformer: ValueTransformer.Type? {
            options.lazy.compactMap { $0.transformer?.type }.first
        }

        /// One `@Attribute` option.
        public struct Option: Hashable, Sendable, CustomStringConvertible {
            let name: String
            let transformer: TransformerReference?
            init(name: String, transformer: TransformerReference? = nil) {
                self.name = name
                self.transformer = transformer
            }
            public var description: String { name }
            /// Store the value as the `Data` a ``ValueTransformer`` makes of it.
            ///
            /// ```swift
            /// @Attribute(.transformable(by: ColorTransformer.self)) var color: Color
            /// ```
            public static func transformable(by transformerType: ValueTransformer.Type) -> Option {
                Option(name: "transformable", transformer: TransformerReference(type: transformerType))
            }
            /// Store the value with its own `Codable` encoding, as an opaque `jsonb` document: no
            /// predicates or sorts on it (they throw `unsupported_predicate`). For types you do not own.
            public static let codable = Option(name: "codable")
            /// A real UNIQUE constraint; an insert that collides updates the existing row.
            public static let unique = Option(name: "unique")
            /// Keep large data out of the main row (`STORAGE EXTERNAL`) and read it only when accessed.
            public static let externalStorage = Option(name: "externalStorage")
            /// Keep the value in history tombstones after deletion.
            public static let preserveValueOnDeletion = Option(name: "preserveValueOnDeletion")
            /// Tracked for changes (and observable) but never stored: fetched models start from the
            /// type's neutral value (`nil`, `0`, `""`).
            public static let ephemeral = Option(name: "ephemeral")
            /// Index for Spotlight (accepted for source compatibility; no effect on Linux).
            public static let spotlight = Option(name: "spotlight")
            /// Encrypt in CloudKit (accepted for source compatibility; no effect).
            public static let allowsCloudEncryption = Option(name: "allowsCloudEncryption")
        }
    }
}
