@_spi(PGModelInternals) import PGModelCore

extension Schema.Attribute {
    /// One `@Attribute` option.
    public struct Option: Hashable, Sendable, CustomStringConvertible {
        let name: String
        let transformer: TransformerReference?
        let mergeRule: MergeRule?
        init(name: String, transformer: TransformerReference? = nil, mergeRule: MergeRule? = nil) {
            self.name = name
            self.transformer = transformer
            self.mergeRule = mergeRule
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
        /// Merge concurrent changes of this attribute by `rule` instead of the context's merge policy:
        /// `.sum` for a counter, `.union` for a set or array, `.lastWriter` for "never a conflict".
        ///
        /// ```swift
        /// @Attribute(.merge(.sum)) var likes: Int = 0
        /// ```
        public static func merge(_ rule: MergeRule) -> Option {
            Option(name: "merge", mergeRule: rule)
        }
        /// Store the value with its own `Codable` encoding, as an opaque `jsonb` document: no
        /// predicates or sorts on it (they throw `unsupported_predicate`). For types you do not own.
        public static let codable = Option(name: "codable")
        /// A real UNIQUE constraint among the owner's models (each user's models are like their own
        /// SwiftData store); an insert that collides updates the existing model.
        public static let unique = Option(name: "unique")
        /// A real UNIQUE constraint among every user's models, not only the owner's: user names, handles,
        /// slugs. An insert that collides with one of the user's own models updates it, as `.unique`
        /// does; a value another user's model holds makes the save throw `unique_violation`, which says
        /// only that the value is taken.
        ///
        /// ```swift
        /// @Attribute(.globallyUnique) var handle: String
        /// ```
        public static let globallyUnique = Option(name: "globallyUnique")
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
