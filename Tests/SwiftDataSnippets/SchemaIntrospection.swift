// Schema introspection and model identity, as SwiftData's reference pages declare them: Schema
// (entities, entitiesByName, entity(for:)), Schema.Entity, Schema.Attribute, Schema.Relationship,
// SchemaProperty and PersistentIdentifier (id, ID, entityName, storeIdentifier, isTemporary, whose
// page gives the save-then-encode example below).
import Foundation
import PGModel

func inspectEntities() {
    let schema = Schema([SnippetTrip.self, SnippetAccommodation.self])
    let entities: [Schema.Entity] = schema.entities
    let byName: [String: Schema.Entity] = schema.entitiesByName
    for entity in entities {
        print(entity.name)
    }
    guard let trip = byName["SnippetTrip"], let same = schema.entity(for: SnippetTrip.self) else { return }
    print(trip == same, Schema.entityName(for: SnippetTrip.self))

    let properties: [any SchemaProperty] = trip.properties
    let stored: [any SchemaProperty] = trip.storedProperties
    let storedByName: [String: any SchemaProperty] = trip.storedPropertiesByName
    let inherited: [any SchemaProperty] = trip.inheritedProperties
    let inheritedByName: [String: any SchemaProperty] = trip.inheritedPropertiesByName
    let superentity: Schema.Entity? = trip.superentity
    let subentities: Set<Schema.Entity> = trip.subentities
    let uniquenessConstraints: [[String]] = trip.uniquenessConstraints
    print(properties.count, stored.count, storedByName.count, inherited.count, inheritedByName.count,
          superentity?.name ?? "-", subentities.count, uniquenessConstraints)

    for property in properties {
        let name: String = property.name
        let originalName: String = property.originalName
        let valueType: any Any.Type = property.valueType
        print(name, originalName, valueType, property.isAttribute, property.isRelationship,
              property.isTransient, property.isOptional, property.isUnique)
    }
}

func inspectAttributes(of entity: Schema.Entity) {
    let attributes: Set<Schema.Attribute> = entity.attributes
    let attributesByName: [String: Schema.Attribute] = entity.attributesByName
    for attribute in attributes {
        let options: [Schema.Attribute.Option] = attribute.options
        let defaultValue: Any? = attribute.defaultValue
        let hashModifier: String? = attribute.hashModifier
        print(attribute.name, attribute.valueType, options, attribute.isUnique, attribute.isOptional,
              attribute.isTransformable, attribute.isTransient, attribute.originalName, hashModifier ?? "",
              defaultValue ?? "none")
        if attribute.options.contains(.unique) {
            print("\(attribute.name) is unique")
        }
    }
    if let name = attributesByName["name"] {
        print(name.valueType == String.self)
    }
}

func inspectRelationships(of entity: Schema.Entity) {
    let relationships: Set<Schema.Relationship> = entity.relationships
    let relationshipsByName: [String: Schema.Relationship] = entity.relationshipsByName
    for relationship in relationships {
        let keypath: AnyKeyPath? = relationship.keypath
        let destination: String = relationship.destination
        let inverseName: String? = relationship.inverseName
        let inverseKeyPath: AnyKeyPath? = relationship.inverseKeyPath
        let options: [Schema.Relationship.Option] = relationship.options
        let minimum: Int? = relationship.minimumModelCount
        let maximum: Int? = relationship.maximumModelCount
        print(relationship.name, keypath as Any, destination, inverseName ?? "-", inverseKeyPath as Any, options,
              relationship.isToOneRelationship, relationship.isOptional, relationship.isUnique, minimum ?? 0, maximum ?? 0,
              relationship.originalName, relationship.hashModifier ?? "")
        switch relationship.deleteRule {
        case .cascade: print("deletes its \(destination)")
        case .deny: print("cannot be deleted while it has a \(destination)")
        case .noAction: print("leaves its \(destination)")
        case .nullify: print("clears its \(destination)'s inverse")
        }
    }
    print(relationshipsByName["accommodation"]?.destination ?? "-")
}

func makeSchemaComponents() {
    let attribute = Schema.Attribute(.unique, originalName: "title", hashModifier: "v2")
    let described = Schema.Attribute(name: "rating", originalName: nil, options: [], valueType: Int?.self,
                                     defaultValue: 3, hashModifier: nil)
    let relationship = Schema.Relationship(.unique, deleteRule: .cascade, minimumModelCount: 0, maximumModelCount: 0,
                                           originalName: nil, inverse: \SnippetAccommodation.trip, hashModifier: nil)
    print(attribute.options, described.isOptional, relationship.deleteRule)
}

func identify(_ model: SnippetTrip, in modelContext: ModelContext) throws -> Data {
    let identifier: PersistentIdentifier = model.persistentModelID
    let id: PersistentIdentifier.ID = identifier.id
    let entityName: String = identifier.entityName
    let storeIdentifier: String? = identifier.storeIdentifier
    var seen = Set<PersistentIdentifier.ID>()
    seen.insert(id)
    print(entityName, storeIdentifier ?? "-", seen.count)

    if model.persistentModelID.isTemporary {
        try modelContext.save()
    }
    let data = try JSONEncoder().encode(model.persistentModelID)
    let decoded = try JSONDecoder().decode(PersistentIdentifier.self, from: data)
    print(decoded == identifier)
    return data
}
