/// What building a fetched instance of one model class needs to know about its properties, worked out
/// once per class (per context) instead of once per row.
struct StorageTraits {
    /// `.ephemeral` properties: never stored.
    var ephemeralKeys: Set<String> = []
    /// `.transformable(by:)` properties and their transformers.
    var transformers: [String: ValueTransformer.Type] = [:]

    init(_ entity: Schema.Entity) {
        for property in entity.propertyMetadata {
            if property.isEphemeral { ephemeralKeys.insert(property.name) }
            if let transformer = property.metadata?.transformer { transformers[property.name] = transformer }
        }
    }
}
