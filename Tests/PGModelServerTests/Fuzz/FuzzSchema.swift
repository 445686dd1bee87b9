@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelSQL

/// The fixed schema fuzzed requests are validated and rendered against: every attribute type (an opaque
/// one included), an inheritance hierarchy, a foreign key, a one-to-one, a one-to-many and a
/// many-to-many, so that every branch of the renderer has something to reach. The seed corpus
/// (`Fuzz/corpus`) names its entities.
///
/// ```swift
/// let renderer = try FuzzSchema.renderer()
/// ```
enum FuzzSchema {
    static let tripAttributes = [
        AttributeDescription(name: "name", type: .string, isUnique: true),
        AttributeDescription(name: "startDate", type: .date, isOptional: true),
        AttributeDescription(name: "perdiem", type: .double, isOptional: true),
        AttributeDescription(name: "budget", type: .decimal, isOptional: true),
        AttributeDescription(name: "nights", type: .int32, isOptional: true),
        AttributeDescription(name: "stars", type: .int16, isOptional: true),
        AttributeDescription(name: "distance", type: .int64, isOptional: true),
        AttributeDescription(name: "rating", type: .float, isOptional: true),
        AttributeDescription(name: "isBooked", type: .bool, isOptional: true),
        AttributeDescription(name: "code", type: .uuid, isOptional: true),
        AttributeDescription(name: "photo", type: .data, isOptional: true),
        AttributeDescription(name: "website", type: .url, isOptional: true),
        AttributeDescription(name: "location", type: .json, isOptional: true),
        AttributeDescription(name: "tags", type: .stringArray, isOptional: true),
        AttributeDescription(name: "scores", type: .doubleArray, isOptional: true),
        AttributeDescription(name: "counts", type: .int64Array, isOptional: true),
        AttributeDescription(name: "flags", type: .boolArray, isOptional: true),
        AttributeDescription(name: "blob", type: .json, isOptional: true, isOpaque: true),
    ]
    static let tripRelationships = [
        RelationshipDescription(name: "owner", destination: "Person", isToMany: false),
        RelationshipDescription(name: "visa", destination: "Visa", isToMany: false, inverse: "trip", deleteRule: .cascade),
        RelationshipDescription(name: "stays", destination: "Stay", isToMany: true, inverse: "trip", deleteRule: .cascade),
        RelationshipDescription(name: "companions", destination: "Person", isToMany: true, inverse: "trips"),
    ]

    static let schema = SchemaDescription(entities: [
        EntityDescription(name: "Trip", attributes: tripAttributes, relationships: tripRelationships),
        EntityDescription(name: "BusinessTrip", attributes: tripAttributes + [AttributeDescription(name: "client", type: .string, isOptional: true)],
                          relationships: tripRelationships, superentity: "Trip"),
        EntityDescription(name: "PersonalTrip", attributes: tripAttributes + [AttributeDescription(name: "reason", type: .string, isOptional: true)],
                          relationships: tripRelationships, superentity: "Trip"),
        EntityDescription(name: "Stay", attributes: [
            AttributeDescription(name: "hotel", type: .string),
            AttributeDescription(name: "cost", type: .double, isOptional: true),
        ], relationships: [
            RelationshipDescription(name: "trip", destination: "Trip", isToMany: false, inverse: "stays"),
            RelationshipDescription(name: "notes", destination: "Note", isToMany: true, deleteRule: .deny),
        ]),
        EntityDescription(name: "Visa", attributes: [AttributeDescription(name: "number", type: .string)], relationships: [
            RelationshipDescription(name: "trip", destination: "Trip", isToMany: false, inverse: "visa"),
        ]),
        EntityDescription(name: "Person", attributes: [AttributeDescription(name: "name", type: .string)], relationships: [
            RelationshipDescription(name: "trips", destination: "Trip", isToMany: true, inverse: "companions"),
            RelationshipDescription(name: "friends", destination: "Person", isToMany: true, inverse: "friendOf"),
            RelationshipDescription(name: "friendOf", destination: "Person", isToMany: true, inverse: "friends"),
        ]),
        EntityDescription(name: "Note", attributes: [AttributeDescription(name: "text", type: .string)]),
    ])

    /// The renderer over ``schema``; throws only if the schema itself were invalid.
    static func renderer() throws -> SQLRenderer {
        try SQLRenderer(schema: schema, schemaName: "app")
    }
}
