import Foundation
import Testing
@_spi(PGModelInternals) @testable import PGModel

// Models whose schema says something about every introspection property: unique attributes, a
// compound `#Unique`, indexes, a renamed attribute, an ephemeral one, defaults, relationships with a
// declared and an inferred inverse, and a class hierarchy.

@Model final class IntroTrip {
    #Unique<IntroTrip>([\.name, \.startDate])
    #Index<IntroTrip>([\.name], [\.startDate, \.name])
    @Attribute(.unique) var code: String
    var name: String
    var startDate: Date
    var rating: Int? = nil
    @Attribute(originalName: "notes_text", hashModifier: "v2") var notes: String = "none"
    @Attribute(.ephemeral) var draft: String = ""
    @Relationship(deleteRule: .cascade, minimumModelCount: 0, maximumModelCount: 10, inverse: \IntroStop.trip)
    var stops: [IntroStop] = []
    var guide: IntroGuide?

    init(code: String, name: String, startDate: Date) {
        self.code = code
        self.name = name
        self.startDate = startDate
    }
}

@Model final class IntroStop {
    var title: String
    var trip: IntroTrip?
    init(title: String) { self.title = title }
}

@Model final class IntroGuide {
    var name: String
    var trips: [IntroTrip] = []
    init(name: String) { self.name = name }
}

@Model class IntroVehicle {
    var wheels: Int
    init(wheels: Int) { self.wheels = wheels }
}

@Model class IntroCar: IntroVehicle {
    var seats: Int = 4
    init(seats: Int) {
        self.seats = seats
        super.init(wheels: 4)
    }
}

@Model class IntroBike: IntroVehicle {
    var hasBell: Bool = true
    init() { super.init(wheels: 2) }
}

@Suite struct SchemaIntrospectionTests {
    let schema = Schema([IntroTrip.self, IntroVehicle.self, IntroCar.self, IntroBike.self])

    @Test func entitiesByNameHoldsEveryEntityIncludingRelatedOnes() throws {
        #expect(Set(schema.entitiesByName.keys) == ["IntroTrip", "IntroStop", "IntroGuide", "IntroVehicle", "IntroCar", "IntroBike"])
        let trip = try #require(schema.entitiesByName["IntroTrip"])
        #expect(trip.name == "IntroTrip")
        #expect(trip == schema.entity(for: IntroTrip.self))
    }

    @Test func attributesCarryNameTypeAndOptions() throws {
        let trip = try #require(schema.entitiesByName["IntroTrip"])
        let attributes = trip.attributesByName
        #expect(Set(attributes.keys) == ["code", "name", "startDate", "rating", "notes", "draft"])
        #expect(trip.attributes.count == 6)
        #expect(Set(trip.attributes.map(\.name)) == Set(attributes.keys))

        let code = try #require(attributes["code"])
        #expect(code.isUnique && code.options == [.unique])
        #expect(code.valueType == String.self && !code.isOptional)
        #expect(code.isAttribute && !code.isRelationship && !code.isTransient && !code.isTransformable)
        #expect(code.originalName == "code")

        let name = try #require(attributes["name"])
        #expect(!name.isUnique && name.options.isEmpty && name.hashModifier == nil && name.defaultValue == nil)

        #expect(attributes["startDate"]?.valueType == Date.self)
        let rating = try #require(attributes["rating"])
        #expect(rating.valueType == Int?.self && rating.isOptional && rating.defaultValue == nil)

        let notes = try #require(attributes["notes"])
        #expect(notes.originalName == "notes_text" && notes.hashModifier == "v2")
        #expect(notes.defaultValue as? String == "none")

        let draft = try #require(attributes["draft"])
        #expect(draft.isTransient && draft.options == [.ephemeral])
    }

    @Test func relationshipsCarryDestinationInverseAndRules() throws {
        let trip = try #require(schema.entitiesByName["IntroTrip"])
        let relationships = trip.relationshipsByName
        #expect(Set(relationships.keys) == ["stops", "guide"])
        #expect(Set(trip.relationships.map(\.name)) == ["stops", "guide"])

        let stops = try #require(relationships["stops"])
        #expect(stops.destination == "IntroStop")
        #expect(stops.inverseName == "trip")
        #expect(stops.inverseKeyPath == \IntroStop.trip)
        #expect(stops.keypath == \IntroTrip.stops)
        #expect(stops.deleteRule == .cascade)
        #expect(!stops.isToOneRelationship && !stops.isOptional)
        #expect(stops.maximumModelCount == 10 && stops.minimumModelCount == 0)
        #expect(ObjectIdentifier(stops.valueType) == ObjectIdentifier(Array<IntroStop>.self))
        #expect(stops.isRelationship && !stops.isAttribute && !stops.isTransient && !stops.isUnique)

        // Declared on neither side: the one relationship each way between the classes is the inverse.
        let guide = try #require(relationships["guide"])
        #expect(guide.destination == "IntroGuide" && guide.inverseName == "trips")
        #expect(guide.isToOneRelationship && guide.isOptional && guide.deleteRule == .nullify)
        #expect(guide.inverseKeyPath == nil)

        let back = try #require(schema.entitiesByName["IntroStop"]?.relationshipsByName["trip"])
        #expect(back.destination == "IntroTrip" && back.inverseName == "stops" && back.isToOneRelationship)
        #expect(schema.entitiesByName["IntroGuide"]?.relationshipsByName["trips"]?.inverseName == "guide")
    }

    @Test func propertiesListAttributesAndRelationshipsInDeclarationOrder() throws {
        let trip = try #require(schema.entitiesByName["IntroTrip"])
        #expect(trip.properties.map(\.name) == ["code", "name", "startDate", "rating", "notes", "draft", "stops", "guide"])
        #expect(trip.properties.filter(\.isRelationship).map(\.name) == ["stops", "guide"])
        #expect(trip.storedProperties.map(\.name) == trip.properties.map(\.name))
        #expect(trip.inheritedProperties.isEmpty && trip.inheritedPropertiesByName.isEmpty)
        #expect(trip.storedPropertiesByName["rating"]?.isOptional == true)
    }

    @Test func uniquenessConstraintsAndIndicesComeFromTheMacros() throws {
        let trip = try #require(schema.entitiesByName["IntroTrip"])
        #expect(trip.uniquenessConstraints == [["name", "startDate"], ["code"]])
        #expect(trip.indices == [["name"], ["startDate", "name"]])
        #expect(schema.entitiesByName["IntroStop"]?.uniquenessConstraints == [])
    }

    @Test func inheritanceLinksSuperentityAndSubentities() throws {
        let vehicle = try #require(schema.entitiesByName["IntroVehicle"])
        let car = try #require(schema.entitiesByName["IntroCar"])
        let bike = try #require(schema.entitiesByName["IntroBike"])
        #expect(vehicle.superentity == nil && vehicle.superentityName == nil)
        #expect(car.superentity == vehicle && car.superentity?.name == "IntroVehicle" && car.superentityName == "IntroVehicle")
        #expect(vehicle.subentities == [car, bike])
        #expect(Set(vehicle.subentities.map(\.name)) == ["IntroCar", "IntroBike"])
        #expect(car.subentities.isEmpty)
        // The superentity found from a subentity knows its own subentities too.
        #expect(car.superentity?.subentities.count == 2)

        #expect(car.inheritedProperties.map(\.name) == ["wheels"])
        #expect(car.storedProperties.map(\.name) == ["seats"])
        #expect(car.storedPropertiesByName["seats"]?.valueType == Int.self)
        #expect(car.inheritedPropertiesByName["wheels"]?.isAttribute == true)
        #expect(car.attributesByName["wheels"] != nil && car.attributesByName["seats"]?.defaultValue as? Int == 4)
    }

    @Test func attributeOptionsAsTheMacroWritesThemStillCompare() {
        #expect(Schema.Attribute(.unique) == Schema.Attribute(.unique))
        #expect(Schema.Attribute(.unique) != Schema.Attribute(.unique, originalName: "old"))
        #expect(Schema.Attribute(originalName: "old").originalName == "old")
        let rating = Schema.Attribute(name: "rating", valueType: Int?.self, defaultValue: 3)
        #expect(rating.isOptional && rating.defaultValue as? Int == 3 && rating.name == "rating")
        let options = Schema.Relationship(.unique, deleteRule: .deny, inverse: \IntroStop.trip)
        #expect(options.deleteRule == .deny && options.isUnique && options.inverseKeyPath == \IntroStop.trip)
    }
}

@Suite struct PersistentIdentifierShapeTests {
    @Test func idIsANestedTypeThatEncodesAsTheUUID() throws {
        let uuid = UUID()
        let identifier = PersistentIdentifier(entityName: "IntroTrip", id: uuid)
        let id: PersistentIdentifier.ID = identifier.id
        #expect(identifier.uuid == uuid)
        #expect(String(decoding: try JSONEncoder().encode(id), as: UTF8.self) == "\"\(uuid.uuidString)\"")
        #expect(identifier.storeIdentifier == nil && !identifier.isTemporary)
    }

    @Test func storeIdentifierAndTemporarinessDoNotChangeIdentity() throws {
        let uuid = UUID()
        let plain = PersistentIdentifier(entityName: "IntroTrip", id: uuid)
        let stored = PersistentIdentifier(entityName: "IntroTrip", id: uuid, storeIdentifier: "app", isTemporary: false)
        let temporary = PersistentIdentifier(entityName: "IntroTrip", id: uuid, storeIdentifier: nil, isTemporary: true)
        #expect(plain == stored && stored == temporary)
        #expect(Set([plain, stored, temporary]).count == 1)
        #expect(plain.hashValue == stored.hashValue && stored.hashValue == temporary.hashValue)
        #expect(PersistentIdentifier(entityName: "IntroStop", id: uuid) != plain)

        let data = try JSONEncoder().encode(temporary)
        let decoded = try JSONDecoder().decode(PersistentIdentifier.self, from: data)
        #expect(decoded == temporary && !decoded.isTemporary)
        let withStore = try JSONDecoder().decode(PersistentIdentifier.self, from: try JSONEncoder().encode(stored))
        #expect(withStore.storeIdentifier == "app")
        // What earlier versions wrote, without a store: still decodes.
        let old = Data(#"{"entityName":"IntroTrip","id":"\#(uuid.uuidString)"}"#.utf8)
        #expect(try JSONDecoder().decode(PersistentIdentifier.self, from: old) == plain)
    }

    @Test func aModelOutsideAContextHasATemporaryIdentifier() {
        let trip = IntroTrip(code: "T1", name: "Alps", startDate: .now)
        #expect(trip.persistentModelID.isTemporary)
        #expect(trip.persistentModelID.storeIdentifier == nil)
        #expect(trip.persistentModelID.entityName == "IntroTrip")
    }
}
