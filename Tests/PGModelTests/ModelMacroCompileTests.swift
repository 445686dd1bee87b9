import Foundation
@_spi(PGModelInternals) import PGModelCore
import Testing
@_spi(PGModelInternals) @testable import PGModel

// Real `@Model` classes compiled against the runtime: if the macros generate anything the runtime
// does not accept, this file stops compiling.

enum MacroMood: String, Codable, CaseIterable { case calm, excited }
enum MacroPriority: Int { case low = 1, high = 3 }

@Model final class MacroAllTypes {
    var string: String
    var bool: Bool
    var int: Int
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var double: Double
    var float: Float
    var decimal: Decimal
    var date: Date
    var uuid: UUID
    var data: Data
    var url: URL
    var mood: MacroMood
    var priority: MacroPriority

    var optionalString: String?
    var optionalBool: Bool?
    var optionalInt: Int?
    var optionalInt8: Int8?
    var optionalInt16: Int16?
    var optionalInt32: Int32?
    var optionalInt64: Int64?
    var optionalUInt8: UInt8?
    var optionalUInt16: UInt16?
    var optionalUInt32: UInt32?
    var optionalDouble: Double?
    var optionalFloat: Float?
    var optionalDecimal: Decimal?
    var optionalDate: Date?
    var optionalUUID: UUID?
    var optionalData: Data?
    var optionalURL: URL?
    var optionalMood: MacroMood?
    var optionalPriority: MacroPriority? = nil

    var counter: Int = 7
    @Transient var scratch: [String] = []
    @Transient var lastViewed: Date?
    var summary: String { "\(string) #\(counter)" }
    static let label = "all types"

    init(string: String, date: Date, uuid: UUID, url: URL) {
        self.string = string
        self.bool = true
        self.int = -42
        self.int8 = -8
        self.int16 = -16
        self.int32 = -32
        self.int64 = -64
        self.uint8 = 8
        self.uint16 = 16
        self.uint32 = 32
        self.double = 2.5
        self.float = 1.25
        self.decimal = Decimal(string: "12.34") ?? 0
        self.date = date
        self.uuid = uuid
        self.data = Data([1, 2, 3])
        self.url = url
        self.mood = .excited
        self.priority = .high
        self.optionalString = "maybe"
        self.optionalMood = .calm
        self.optionalPriority = .low
    }
}

/// The seed documents' models (SwiftData sessions and reference), minus relationships and inheritance.
enum SeedModels {
    // "Import SwiftData and add @Model" (SampleTrips), without bucketList / livingAccommodation.
    @Model
    class Trip {
        var name: String
        var destination: String
        var startDate: Date
        var endDate: Date

        init(name: String, destination: String, startDate: Date, endDate: Date) {
            self.name = name
            self.destination = destination
            self.startDate = startDate
            self.endDate = endDate
        }
    }

    // PersonalTrip's properties, as a standalone model.
    @Model
    class PersonalTrip {
        enum Reason: String, CaseIterable, Codable {
            case family
            case reunion
            case wellness
        }

        var name: String
        var reason: Reason

        init(name: String, reason: Reason) {
            self.name = name
            self.reason = reason
        }
    }

    // The axiom reference's basic model.
    @Model final class Track {
        @Attribute(.unique) var id: String
        var title: String
        var artist: String
        var duration: TimeInterval
        var genre: String?

        @Transient var formattedDuration: String {
            let minutes = Int(duration) / 60
            let seconds = Int(duration) % 60
            return String(format: "%d:%02d", minutes, seconds)
        }

        init(id: String, title: String, artist: String, duration: TimeInterval, genre: String? = nil) {
            self.id = id
            self.title = title
            self.artist = artist
            self.duration = duration
            self.genre = genre
        }
    }

    // The CloudKit-friendly variant: every property has a default.
    @Model final class DefaultedTrack {
        @Attribute(.unique) var id: String = UUID().uuidString
        var title: String = ""
        var duration: TimeInterval = 0
        var genre: String? = nil

        init() {}
    }

    // The flashcards session's Card.
    @Model
    final class Card {
        var front: String
        var back: String
        var creationDate: Date

        init(front: String, back: String, creationDate: Date = .now) {
            self.front = front
            self.back = back
            self.creationDate = creationDate
        }
    }
}

enum SampleTripsSchemaV2 {
    @Model
    class Trip {
        @Attribute(.unique) var name: String
        var destination: String

        @Attribute(originalName: "start_date") var startDate: Date
        @Attribute(originalName: "end_date") var endDate: Date

        init(name: String, destination: String, startDate: Date, endDate: Date) {
            self.name = name
            self.destination = destination
            self.startDate = startDate
            self.endDate = endDate
        }
    }
}

enum SampleTripsSchemaV3 {
    @Model
    class Trip {
        #Unique<Trip>([\.name, \.startDate, \.endDate])
        #Index<Trip>([\.name], [\.startDate], [\.endDate], [\.name, \.startDate, \.endDate])

        @Attribute(.preserveValueOnDeletion)
        var name: String

        @Attribute(hashModifier: "v3")
        var destination: String

        @Attribute(.preserveValueOnDeletion, originalName: "start_date")
        var startDate: Date

        @Attribute(.preserveValueOnDeletion, originalName: "end_date")
        var endDate: Date

        init(name: String, destination: String, startDate: Date, endDate: Date) {
            self.name = name
            self.destination = destination
            self.startDate = startDate
            self.endDate = endDate
        }
    }
}

/// The axiom reference's Swift 6 pattern: a main-actor model gets a main-actor-isolated conformance.
@MainActor
@Model final class MacroMainActorTrack {
    var id: String
    var title: String
    init(id: String, title: String) {
        self.id = id
        self.title = title
    }
}

/// A public model: generated members must be public for the conformance to compile.
@Model public final class MacroPublicNote {
    public var text: String
    public init(text: String) { self.text = text }
}

/// Observation's onChange closure is @Sendable; this records that it ran.
private final class ChangeFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var fired = false
    func set() { lock.withLock { fired = true } }
    var value: Bool { lock.withLock { fired } }
}

@Suite("@Model compiles and works against the runtime")
struct ModelMacroCompileTests {
    let date = Date(timeIntervalSince1970: 1_700_000_000)
    let uuid = UUID()
    let url = URL(string: "https://example.com/trips?id=1")!

    func makeAllTypes() -> MacroAllTypes {
        MacroAllTypes(string: "hello", date: date, uuid: uuid, url: url)
    }

    @Test func schemaMetadataListsPersistedPropertiesInOrder() {
        let names = MacroAllTypes.schemaMetadata.map(\.name)
        #expect(names == [
            "string", "bool", "int", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
            "double", "float", "decimal", "date", "uuid", "data", "url", "mood", "priority",
            "optionalString", "optionalBool", "optionalInt", "optionalInt8", "optionalInt16", "optionalInt32",
            "optionalInt64", "optionalUInt8", "optionalUInt16", "optionalUInt32", "optionalDouble",
            "optionalFloat", "optionalDecimal", "optionalDate", "optionalUUID", "optionalData", "optionalURL",
            "optionalMood", "optionalPriority", "counter",
        ])
    }

    @Test func attributeTypesAndOptionality() throws {
        let entity = try #require(Schema([MacroAllTypes.self]).schemaDescription.entities.first)
        #expect(entity.name == "MacroAllTypes")
        let types = Dictionary(uniqueKeysWithValues: entity.attributes.map { ($0.name, $0.type) })
        let expected: [String: AttributeType] = [
            "string": .string, "bool": .bool, "int": .int64, "int8": .int16, "int16": .int16,
            "int32": .int32, "int64": .int64, "uint8": .int16, "uint16": .int32, "uint32": .int64,
            "double": .double, "float": .float, "decimal": .decimal, "date": .date, "uuid": .uuid,
            "data": .data, "url": .url, "mood": .string, "priority": .int64, "counter": .int64,
        ]
        for (name, type) in expected {
            #expect(types[name] == type, "\(name)")
            let optionalName = "optional" + name.prefix(1).uppercased() + name.dropFirst()
            if name != "counter" {
                let optionalKey = types.keys.first { $0.lowercased() == optionalName.lowercased() }
                let key = try #require(optionalKey, "\(optionalName)")
                #expect(types[key] == type, "\(key)")
            }
        }
        for attribute in entity.attributes {
            #expect(attribute.isOptional == attribute.name.hasPrefix("optional"), "\(attribute.name)")
        }
        #expect(!entity.attributes.contains { $0.name == "scratch" || $0.name == "lastViewed" || $0.name == "summary" })
    }

    @Test func userInitializerSetsProperties() {
        let model = makeAllTypes()
        #expect(model.string == "hello")
        #expect(model.int8 == -8 && model.uint32 == 32)
        #expect(model.decimal == Decimal(string: "12.34"))
        #expect(model.url == url && model.uuid == uuid && model.date == date)
        #expect(model.mood == .excited && model.priority == .high)
        #expect(model.optionalString == "maybe" && model.optionalInt == nil && model.optionalPriority == .low)
        #expect(model.counter == 7)
        #expect(model.scratch.isEmpty && model.lastViewed == nil)
        #expect(model._$backingData.state == .detached)
        #expect(model.summary == "hello #7")
        // A first assignment in the initializer goes through the init accessor: no change recorded.
        // A property that already holds a value (an optional starts as nil, a defaulted one holds its
        // default) is assigned through the setter, as with @Observable, and the runtime currently
        // records that as a change even on a detached model.
        #expect(model._$backingData.changedKeys.isSubset(of: ["optionalString", "optionalMood", "optionalPriority"]))
        let trip = SeedModels.Trip(name: "Paris", destination: "France", startDate: date, endDate: date)
        #expect(trip._$backingData.changedKeys.isEmpty)
    }

    @Test func settersRecordChanges() throws {
        // A fetched instance, so the result does not depend on how detached models track changes.
        let row = RowValues(entity: "Card", id: UUID(), values: [
            "front": .string("Q"), "back": .string("A"), "creationDate": .date(date),
        ])
        let card = try SeedModels.Card(backingData: ModelBackingData(row: row))
        #expect(card._$backingData.changedKeys.isEmpty)
        card.front = "Question"
        card.back = "Answer"
        #expect(card.front == "Question" && card.back == "Answer")
        #expect(card._$backingData.changedKeys == ["front", "back"])

        let model = makeAllTypes()
        model.string = "changed"
        model.optionalInt = 5
        model.scratch = ["not stored"]
        #expect(model.string == "changed" && model.optionalInt == 5)
        #expect(!model._$backingData.changedKeys.contains("scratch"))
    }

    @Test func settersNotifyObservers() {
        let model = makeAllTypes()
        let flag = ChangeFlag()
        withObservationTracking {
            _ = model.string
        } onChange: {
            flag.set()
        }
        model.int = 1
        #expect(!flag.value)
        model.string = "observed"
        #expect(flag.value)
    }

    /// `_$backingData` is created on first use: a new model still has exactly one, with one id, and a
    /// model built from a row keeps the row's.
    @Test func newModelsGetOneBackingDataOnFirstUse() throws {
        let model = makeAllTypes()
        let first = model._$backingData
        #expect(model._$backingData === first)
        #expect(first.state == .detached)
        let id = model.persistentModelID
        #expect(model.persistentModelID == id)
        #expect(model._$backingData.id == id.uuid)
        let other = makeAllTypes()
        #expect(other._$backingData !== first)
        #expect(other.persistentModelID != id)
    }

    @Test func roundTripsThroughMetadataAndBackingData() throws {
        let original = makeAllTypes()
        original.optionalInt16 = 16
        original.optionalDate = date
        var values: [String: PGValue] = [:]
        for property in MacroAllTypes.schemaMetadata {
            let value: PGValue? = property.read(original)
            #expect(value != nil, "\(property.name)")
            values[property.name] = value
        }
        #expect(values["mood"] == .string("excited"))
        #expect(values["priority"] == .int(3))
        #expect(values["optionalInt"] == .null)
        let id = UUID()
        let backing = ModelBackingData(row: RowValues(entity: "MacroAllTypes", id: id, values: values))
        let copy = try MacroAllTypes(backingData: backing)
        #expect(copy._$backingData === backing)
        #expect(copy.persistentModelID == PersistentIdentifier(entityName: "MacroAllTypes", id: id))
        #expect(copy.string == original.string && copy.bool == original.bool && copy.int == original.int)
        #expect(copy.int8 == original.int8 && copy.int16 == original.int16 && copy.int32 == original.int32)
        #expect(copy.int64 == original.int64 && copy.uint8 == original.uint8 && copy.uint16 == original.uint16)
        #expect(copy.uint32 == original.uint32 && copy.double == original.double && copy.float == original.float)
        #expect(copy.decimal == original.decimal && copy.date == original.date && copy.uuid == original.uuid)
        #expect(copy.data == original.data && copy.url == original.url)
        #expect(copy.mood == original.mood && copy.priority == original.priority)
        #expect(copy.optionalString == "maybe" && copy.optionalInt == nil && copy.optionalInt16 == 16)
        #expect(copy.optionalDate == date && copy.optionalMood == .calm && copy.optionalPriority == .low)
        #expect(copy.counter == 7)
        // Transient properties take their defaults: the user's initializer did not run.
        #expect(copy.scratch.isEmpty && copy.lastViewed == nil)
        #expect(copy._$backingData.changedKeys.isEmpty)

        // Writing through the metadata goes through the generated setter.
        let title = try #require(MacroAllTypes.schemaMetadata.first { $0.name == "string" })
        try title.write(copy, .string("written"))
        #expect(copy.string == "written")
        #expect(copy._$backingData.changedKeys == ["string"])
    }

    @Test func missingOptionalValuesReadAsNil() throws {
        let values: [String: PGValue] = [
            "front": .string("Who invented the compiler?"), "back": .string("Grace Hopper"), "creationDate": .date(date),
        ]
        let card = try SeedModels.Card(backingData: ModelBackingData(row: RowValues(entity: "Card", id: UUID(), values: values)))
        #expect(card.back == "Grace Hopper")
        let track = try SeedModels.Track(backingData: ModelBackingData(row: RowValues(entity: "Track", id: UUID(), values: [
            "id": .string("t1"), "title": .string("Song"), "artist": .string("Artist"), "duration": .double(240),
        ])))
        #expect(track.genre == nil && track.formattedDuration == "4:00")
        #expect(throws: PGModelError.self) {
            try SeedModels.Card(backingData: ModelBackingData(row: RowValues(entity: "Card", id: UUID(), values: [:])))
        }
    }

    @Test func attributeOptionsReachTheSchema() throws {
        let v2 = Schema([SampleTripsSchemaV2.Trip.self])
        let entity = try #require(v2.entities.first)
        #expect(entity.property(named: "name")?.metadata == Schema.Attribute(.unique))
        #expect(entity.property(named: "startDate")?.metadata?.originalName == "start_date")
        #expect(entity.property(named: "destination")?.metadata == nil)
        #expect(entity.property(for: \SampleTripsSchemaV2.Trip.endDate)?.name == "endDate")
        #expect(entity.entityDescription.uniquenessConstraints == [["name"]])
        let description = try #require(v2.schemaDescription.entities.first)
        #expect(description.attributes.first { $0.name == "endDate" }?.originalName == "end_date")
        #expect(description.attributes.first { $0.name == "name" }?.isUnique == true)

        let v3 = try #require(Schema([SampleTripsSchemaV3.Trip.self]).entities.first)
        #expect(v3.property(named: "name")?.metadata?.options == [.preserveValueOnDeletion])
        #expect(v3.property(named: "destination")?.metadata?.hashModifier == "v3")
        #expect(v3.property(named: "endDate")?.metadata == Schema.Attribute(.preserveValueOnDeletion, originalName: "end_date"))
    }

    @Test func uniqueAndIndexGroups() {
        #expect(SampleTripsSchemaV3.Trip._$uniquenessConstraints == [["name", "startDate", "endDate"]])
        #expect(SampleTripsSchemaV3.Trip._$indexes == [.binary(["name"]), .binary(["startDate"]), .binary(["endDate"]), .binary(["name", "startDate", "endDate"])])
        let entity = Schema.Entity(SampleTripsSchemaV3.Trip.self).entityDescription
        #expect(entity.uniquenessConstraints == [["name", "startDate", "endDate"]])
        #expect(entity.indexes.count == 4)
        // Without #Unique / #Index the protocol's defaults apply.
        #expect(SeedModels.Trip._$uniquenessConstraints.isEmpty && SeedModels.Trip._$indexes.isEmpty)
    }

    @Test func seedModelsAreUsable() throws {
        let trip = SeedModels.Trip(name: "Paris", destination: "France", startDate: date, endDate: date.addingTimeInterval(86_400))
        trip.destination = "Île-de-France"
        #expect(trip.destination == "Île-de-France")
        let personal = SeedModels.PersonalTrip(name: "Home", reason: .family)
        #expect(personal.reason == .family)
        #expect(Schema([SeedModels.PersonalTrip.self]).schemaDescription.entities.first?.attributes.map(\.type) == [.string, .string])
        let track = SeedModels.Track(id: "1", title: "Song", artist: "Artist", duration: 240)
        #expect(track.id == "1")  // the model's own `id` wins over persistentModelID
        #expect(track.persistentModelID.entityName == "Track")
        let defaulted = SeedModels.DefaultedTrack()
        #expect(!defaulted.id.isEmpty && defaulted.title.isEmpty && defaulted.genre == nil)
        #expect(SeedModels.DefaultedTrack.schemaMetadata.map(\.name) == ["id", "title", "duration", "genre"])
        let card = SeedModels.Card(front: "Q", back: "A")
        #expect(card.front == "Q")
        let note = MacroPublicNote(text: "hi")
        #expect(note.text == "hi")
        #expect(MacroPublicNote.schemaMetadata.count == 1)
    }

    @MainActor @Test func mainActorModelsWorkOnTheMainActor() throws {
        let track = MacroMainActorTrack(id: "1", title: "Song")
        track.title = "Renamed"
        #expect(track.title == "Renamed")
        let entity = try #require(Schema([MacroMainActorTrack.self]).schemaDescription.entities.first)
        #expect(entity.attributes.map(\.name) == ["id", "title"])
    }

    @Test func modelsAreHashableByIdentity() {
        let a = SeedModels.Card(front: "Q", back: "A")
        let b = SeedModels.Card(front: "Q", back: "A")
        #expect(a == a && a != b)
        #expect(Set([a, b, a]).count == 2)
        #expect(a.id == a.persistentModelID && a.id != b.id)
    }
}
