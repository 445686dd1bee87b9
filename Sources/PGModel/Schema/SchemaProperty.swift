/// What every property of a ``Schema/Entity`` says about itself: ``Schema/Attribute`` and
/// ``Schema/Relationship`` conform.
///
/// ```swift
/// for property in schema.entitiesByName["Trip"]?.properties ?? [] {
///     print(property.name, property.valueType, property.isRelationship, property.isOptional)
/// }
/// ```
public protocol SchemaProperty: Hashable, Sendable {
    /// The Swift property name.
    var name: String { get }
    /// The property's previous name (`originalName:` of `@Attribute` or `@Relationship`), or its name
    /// when it was never renamed.
    var originalName: String { get }
    /// The declared Swift type, `Optional` included (`Optional<Date>`, `Array<Track>`).
    var valueType: any Any.Type { get }
    /// Whether this is an attribute.
    var isAttribute: Bool { get }
    /// Whether this is a relationship.
    var isRelationship: Bool { get }
    /// Whether the value is tracked but never stored (`@Attribute(.ephemeral)`).
    var isTransient: Bool { get }
    /// Whether the declared type is an `Optional`.
    var isOptional: Bool { get }
    /// Whether the property was declared with the `.unique` option.
    var isUnique: Bool { get }
}

/// Tells an `Optional` metatype from any other (`SchemaProperty.isOptional` of a declared type).
protocol OptionalValueType {}
extension Optional: OptionalValueType {}
