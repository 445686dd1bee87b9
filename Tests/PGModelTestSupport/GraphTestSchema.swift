@_spi(PGModelInternals) import PGModelCore

/// The relationship and inheritance test schema: a Trip hierarchy with a one-to-one and a one-to-many,
/// Album/Track (cascade), a Publisher that denies deleting its albums, a Playlist with an inverse-less
/// to-many (join table), User followers/following (many-to-many on one entity), and a Folder tree whose
/// children cascade and whose `shortcut`s (cascade, no inverse) can form a ring.
package enum GraphTestSchema {
    package static let tripAttributes = [
        AttributeDescription(name: "name", type: .string, isUnique: true),
        AttributeDescription(name: "destination", type: .string),
    ]
    package static let tripRelationships = [
        RelationshipDescription(name: "livingAccommodation", destination: "LivingAccommodation", isToMany: false, inverse: "trip", deleteRule: .cascade),
        RelationshipDescription(name: "bucketList", destination: "BucketListItem", isToMany: true, inverse: "trip", deleteRule: .nullify),
    ]

    package static let schema = SchemaDescription(entities: [
        EntityDescription(name: "Trip", attributes: tripAttributes, relationships: tripRelationships),
        EntityDescription(name: "BusinessTrip", attributes: tripAttributes + [AttributeDescription(name: "perdiem", type: .double)],
                          relationships: tripRelationships, superentity: "Trip"),
        EntityDescription(name: "PersonalTrip", attributes: tripAttributes + [AttributeDescription(name: "reason", type: .string, isOptional: true)],
                          relationships: tripRelationships, superentity: "Trip"),
        EntityDescription(name: "LivingAccommodation", attributes: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "address", type: .string),
        ], relationships: [
            RelationshipDescription(name: "trip", destination: "Trip", isToMany: false, inverse: "livingAccommodation"),
        ]),
        EntityDescription(name: "BucketListItem", attributes: [
            AttributeDescription(name: "title", type: .string),
            AttributeDescription(name: "cost", type: .double, isOptional: true),
            AttributeDescription(name: "isInPlan", type: .bool),
        ], relationships: [
            RelationshipDescription(name: "trip", destination: "Trip", isToMany: false, inverse: "bucketList"),
        ]),
        EntityDescription(name: "Publisher", attributes: [AttributeDescription(name: "name", type: .string)], relationships: [
            RelationshipDescription(name: "albums", destination: "Album", isToMany: true, inverse: "publisher", deleteRule: .deny),
        ]),
        EntityDescription(name: "Album", attributes: [AttributeDescription(name: "title", type: .string)], relationships: [
            RelationshipDescription(name: "tracks", destination: "Track", isToMany: true, inverse: "album", deleteRule: .cascade),
            RelationshipDescription(name: "publisher", destination: "Publisher", isToMany: false, inverse: "albums"),
        ]),
        EntityDescription(name: "Track", attributes: [
            AttributeDescription(name: "title", type: .string),
            AttributeDescription(name: "duration", type: .int64),
        ], relationships: [
            RelationshipDescription(name: "album", destination: "Album", isToMany: false, inverse: "tracks"),
        ]),
        EntityDescription(name: "Playlist", attributes: [AttributeDescription(name: "name", type: .string)], relationships: [
            RelationshipDescription(name: "tracks", destination: "Track", isToMany: true),
        ]),
        EntityDescription(name: "User", attributes: [AttributeDescription(name: "name", type: .string)], relationships: [
            RelationshipDescription(name: "followers", destination: "User", isToMany: true, inverse: "following"),
            RelationshipDescription(name: "following", destination: "User", isToMany: true, inverse: "followers"),
        ]),
        EntityDescription(name: "Folder", attributes: [AttributeDescription(name: "name", type: .string)], relationships: [
            RelationshipDescription(name: "children", destination: "Folder", isToMany: true, inverse: "parent", deleteRule: .cascade),
            RelationshipDescription(name: "parent", destination: "Folder", isToMany: false, inverse: "children"),
            RelationshipDescription(name: "shortcut", destination: "Folder", isToMany: false, deleteRule: .cascade),
        ]),
    ])
}
