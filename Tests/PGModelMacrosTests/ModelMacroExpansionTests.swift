import PGModelMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosTestSupport
import XCTest

/// Full expansions of `@Model`, including the `@_PersistedProperty` it puts on each persisted property.
final class ModelMacroExpansionTests: XCTestCase {
    func testMinimalModel() {
        assertMacroExpansion(
            """
            @Model final class Note {
                var text: String
                init(text: String) { self.text = text }
            }
            """,
            expandedSource: #"""
            final class Note {
                var text: String {
                    @storageRestrictions(initializes: _text)
                    init(initialValue) {
                        _text = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \.text)
                        self._$willRead("text")
                        return _text
                    }
                    set {
                        self._$willRead("text")
                        let oldValue = _text
                        _$observationRegistrar.withMutation(of: self, keyPath: \.text) {
                            _text = newValue
                        }
                        self._$didChange("text", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _text: String
                init(text: String) { self.text = text }

                @Transient lazy var _$backingData = PGModel.ModelBackingData()

                @Transient private lazy var _$observationRegistrar = Observation.ObservationRegistrar()

                required init(backingData: PGModel.ModelBackingData) throws {
                    self._text = try backingData.value(forKey: "text", codec: PGModel._AttributeCodecs.codec(String.self))
                    self._$backingData = backingData
                }

                func _$readStoredValues(into reader: inout PGModel._StoredValueReader) {
                    reader.read(self._text, PGModel._AttributeCodecs.codec(String.self))
                }

                static var schemaMetadata: [PGModel.Schema.PropertyMetadata] {
                    [
                        PGModel.Schema.PropertyMetadata(name: "text", keypath: \Note.text, codec: PGModel._AttributeCodecs.codec(String.self))
                    ]
                }
            }

            extension Note: PGModel.PersistentModel {
            }

            extension Note: Observation.Observable {
            }
            """#,
            macroSpecs: modelMacroSpecs
        )
    }

    func testTrip() {
        assertMacroExpansion(
            #"""
            @Model final class Trip {
                @Attribute(.unique) var name: String
                var startDate: Date
                var rating: Int? = nil
                var kind: Kind
                @Transient var cache: Int = 0
                #Unique<Trip>([\.name, \.startDate])
                #Index<Trip>([\.startDate], [\.name, \.startDate])
                init(name: String, startDate: Date, kind: Kind) { self.name = name; self.startDate = startDate; self.kind = kind }
            }
            """#,
            expandedSource: #"""
            final class Trip {
                @Attribute(.unique)
                var name: String {
                    @storageRestrictions(initializes: _name)
                    init(initialValue) {
                        _name = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \.name)
                        self._$willRead("name")
                        return _name
                    }
                    set {
                        self._$willRead("name")
                        let oldValue = _name
                        _$observationRegistrar.withMutation(of: self, keyPath: \.name) {
                            _name = newValue
                        }
                        self._$didChange("name", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _name: String
                var startDate: Date {
                    @storageRestrictions(initializes: _startDate)
                    init(initialValue) {
                        _startDate = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \.startDate)
                        self._$willRead("startDate")
                        return _startDate
                    }
                    set {
                        self._$willRead("startDate")
                        let oldValue = _startDate
                        _$observationRegistrar.withMutation(of: self, keyPath: \.startDate) {
                            _startDate = newValue
                        }
                        self._$didChange("startDate", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _startDate: Date
                var rating: Int? {
                    @storageRestrictions(initializes: _rating)
                    init(initialValue) {
                        _rating = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \.rating)
                        self._$willRead("rating")
                        return _rating
                    }
                    set {
                        self._$willRead("rating")
                        let oldValue = _rating
                        _$observationRegistrar.withMutation(of: self, keyPath: \.rating) {
                            _rating = newValue
                        }
                        self._$didChange("rating", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _rating: Optional<Int>
                var kind: Kind {
                    @storageRestrictions(initializes: _kind)
                    init(initialValue) {
                        _kind = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \.kind)
                        self._$willRead("kind")
                        return _kind
                    }
                    set {
                        self._$willRead("kind")
                        let oldValue = _kind
                        _$observationRegistrar.withMutation(of: self, keyPath: \.kind) {
                            _kind = newValue
                        }
                        self._$didChange("kind", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _kind: Kind
                @Transient var cache: Int = 0
                init(name: String, startDate: Date, kind: Kind) { self.name = name; self.startDate = startDate; self.kind = kind }

                @Transient lazy var _$backingData = PGModel.ModelBackingData()

                @Transient private lazy var _$observationRegistrar = Observation.ObservationRegistrar()

                required init(backingData: PGModel.ModelBackingData) throws {
                    self._name = try backingData.value(forKey: "name", codec: PGModel._AttributeCodecs.codec(String.self))
                    self._startDate = try backingData.value(forKey: "startDate", codec: PGModel._AttributeCodecs.codec(Date.self))
                    self._rating = try backingData.value(forKey: "rating", codec: PGModel._AttributeCodecs.codec(Int?.self))
                    self._kind = try backingData.value(forKey: "kind", codec: PGModel._AttributeCodecs.codec(Kind.self))
                    self._$backingData = backingData
                }

                func _$readStoredValues(into reader: inout PGModel._StoredValueReader) {
                    reader.read(self._name, PGModel._AttributeCodecs.codec(String.self))
                    reader.read(self._startDate, PGModel._AttributeCodecs.codec(Date.self))
                    reader.read(self._rating, PGModel._AttributeCodecs.codec(Int?.self))
                    reader.read(self._kind, PGModel._AttributeCodecs.codec(Kind.self))
                }

                static var schemaMetadata: [PGModel.Schema.PropertyMetadata] {
                    [
                        PGModel.Schema.PropertyMetadata(name: "name", keypath: \Trip.name, codec: PGModel._AttributeCodecs.codec(String.self), metadata: PGModel.Schema.Attribute(.unique)),
                        PGModel.Schema.PropertyMetadata(name: "startDate", keypath: \Trip.startDate, codec: PGModel._AttributeCodecs.codec(Date.self)),
                        PGModel.Schema.PropertyMetadata(name: "rating", keypath: \Trip.rating, codec: PGModel._AttributeCodecs.codec(Int?.self)),
                        PGModel.Schema.PropertyMetadata(name: "kind", keypath: \Trip.kind, codec: PGModel._AttributeCodecs.codec(Kind.self))
                    ]
                }

                static var _$uniquenessConstraints: [[String]] {
                    [["name", "startDate"]]
                }

                static var _$indexes: [PGModel.Schema.IndexMetadata] {
                    [.binary(["startDate"]), .binary(["name", "startDate"])]
                }
            }

            extension Trip: PGModel.PersistentModel {
            }

            extension Trip: Observation.Observable {
            }
            """#,
            macroSpecs: modelMacroSpecs
        )
    }

    func testPublicClassMakesGeneratedMembersPublic() {
        assertMacroExpansion(
            """
            @Model public final class Note {
                public var text: String
                public init(text: String) { self.text = text }
            }
            """,
            expandedSource: """
            public final class Note {
            \(persisted("text", "String", modifiers: "public "))
                public init(text: String) { self.text = text }

            \(generatedMembers("Note", [("text", "String", nil)], access: "public "))
            }

            extension Note: PGModel.PersistentModel {
            }

            extension Note: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testOpenClassMakesGeneratedMembersPublic() {
        assertMacroExpansion(
            """
            @Model open class Note {
                var text: String
                init(text: String) { self.text = text }
            }
            """,
            expandedSource: """
            open class Note {
                var text: String {
                    @storageRestrictions(initializes: _text)
                    init(initialValue) {
                        _text = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \\.text)
                        self._$willRead("text")
                        return _text
                    }
                    set {
                        self._$willRead("text")
                        let oldValue = _text
                        _$observationRegistrar.withMutation(of: self, keyPath: \\.text) {
                            _text = newValue
                        }
                        self._$didChange("text", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _text: String
                init(text: String) { self.text = text }

                @Transient public lazy var _$backingData = PGModel.ModelBackingData()

                @Transient private lazy var _$observationRegistrar = Observation.ObservationRegistrar()

                public required init(backingData: PGModel.ModelBackingData) throws {
                    self._text = try backingData.value(forKey: "text", codec: PGModel._AttributeCodecs.codec(String.self))
                    self._$backingData = backingData
                    try self._$restoreInheritingValues(from: backingData)
                }

                open func _$readStoredValues(into reader: inout PGModel._StoredValueReader) {
                    reader.read(self._text, PGModel._AttributeCodecs.codec(String.self))
                }

                open func _$restoreInheritingValues(from backingData: PGModel.ModelBackingData) throws {
                }

                public static func _$schemaMetadata_Note<Root: Note>(rootedAt _: Root.Type) -> [PGModel.Schema.PropertyMetadata] {
                    [
                        PGModel.Schema.PropertyMetadata(name: "text", keypath: \\Root.text, codec: PGModel._AttributeCodecs.codec(String.self), declaredKeypath: \\Note.text)
                    ]
                }

                open class var schemaMetadata: [PGModel.Schema.PropertyMetadata] {
                    _$schemaMetadata_Note(rootedAt: Self.self)
                }

                open class var _$uniquenessConstraints: [[String]] {
                    []
                }

                open class var _$globalUniquenessConstraints: [[String]] {
                    []
                }

                open class var _$indexes: [PGModel.Schema.IndexMetadata] {
                    []
                }

                open class var _$superentity: (any PGModel.PersistentModel.Type)? {
                    nil
                }
            }

            extension Note: PGModel.PersistentModel {
            }

            extension Note: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testNonFinalClassKeepsRequiredInit() {
        assertMacroExpansion(
            """
            @Model class Trip {
                var name: String
                var destination: String
                init(name: String, destination: String) { self.name = name; self.destination = destination }
            }
            """,
            expandedSource: """
            class Trip {
                var name: String {
                    @storageRestrictions(initializes: _name)
                    init(initialValue) {
                        _name = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \\.name)
                        self._$willRead("name")
                        return _name
                    }
                    set {
                        self._$willRead("name")
                        let oldValue = _name
                        _$observationRegistrar.withMutation(of: self, keyPath: \\.name) {
                            _name = newValue
                        }
                        self._$didChange("name", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _name: String
                var destination: String {
                    @storageRestrictions(initializes: _destination)
                    init(initialValue) {
                        _destination = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \\.destination)
                        self._$willRead("destination")
                        return _destination
                    }
                    set {
                        self._$willRead("destination")
                        let oldValue = _destination
                        _$observationRegistrar.withMutation(of: self, keyPath: \\.destination) {
                            _destination = newValue
                        }
                        self._$didChange("destination", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _destination: String
                init(name: String, destination: String) { self.name = name; self.destination = destination }

                @Transient lazy var _$backingData = PGModel.ModelBackingData()

                @Transient private lazy var _$observationRegistrar = Observation.ObservationRegistrar()

                required init(backingData: PGModel.ModelBackingData) throws {
                    self._name = try backingData.value(forKey: "name", codec: PGModel._AttributeCodecs.codec(String.self))
                    self._destination = try backingData.value(forKey: "destination", codec: PGModel._AttributeCodecs.codec(String.self))
                    self._$backingData = backingData
                    try self._$restoreInheritingValues(from: backingData)
                }

                func _$readStoredValues(into reader: inout PGModel._StoredValueReader) {
                    reader.read(self._name, PGModel._AttributeCodecs.codec(String.self))
                    reader.read(self._destination, PGModel._AttributeCodecs.codec(String.self))
                }

                func _$restoreInheritingValues(from backingData: PGModel.ModelBackingData) throws {
                }

                static func _$schemaMetadata_Trip<Root: Trip>(rootedAt _: Root.Type) -> [PGModel.Schema.PropertyMetadata] {
                    [
                        PGModel.Schema.PropertyMetadata(name: "name", keypath: \\Root.name, codec: PGModel._AttributeCodecs.codec(String.self), declaredKeypath: \\Trip.name),
                        PGModel.Schema.PropertyMetadata(name: "destination", keypath: \\Root.destination, codec: PGModel._AttributeCodecs.codec(String.self), declaredKeypath: \\Trip.destination)
                    ]
                }

                class var schemaMetadata: [PGModel.Schema.PropertyMetadata] {
                    _$schemaMetadata_Trip(rootedAt: Self.self)
                }

                class var _$uniquenessConstraints: [[String]] {
                    []
                }

                class var _$globalUniquenessConstraints: [[String]] {
                    []
                }

                class var _$indexes: [PGModel.Schema.IndexMetadata] {
                    []
                }

                class var _$superentity: (any PGModel.PersistentModel.Type)? {
                    nil
                }
            }

            extension Trip: PGModel.PersistentModel {
            }

            extension Trip: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testOptionalAndEnumProperties() {
        assertMacroExpansion(
            """
            @Model final class Visit {
                enum Reason: String {
                    case family, work
                }
                var reason: Reason
                var backup: Reason?
                var note: String?
                var count: Optional<Int>
                var place: Geo.Kind
                init(reason: Reason) { self.reason = reason; self.count = nil; self.place = .city }
            }
            """,
            expandedSource: """
            final class Visit {
                enum Reason: String {
                    case family, work
                }
            \(persisted("reason", "Reason"))
            \(persisted("backup", "Reason?"))
            \(persisted("note", "String?"))
            \(persisted("count", "Optional<Int>"))
            \(persisted("place", "Geo.Kind"))
                init(reason: Reason) { self.reason = reason; self.count = nil; self.place = .city }

            \(generatedMembers("Visit", [
                ("reason", "Reason", nil), ("backup", "Reason?", nil), ("note", "String?", nil),
                ("count", "Optional<Int>", nil), ("place", "Geo.Kind", nil),
            ]))
            }

            extension Visit: PGModel.PersistentModel {
            }

            extension Visit: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testDefaultValuesStayOnTheDeclaration() {
        // The default reaches `_count` through the init accessor; the peer has no initializer so the
        // default expression is evaluated once. (swift-syntax's test expander drops the `= 7` shown
        // here; the compiler keeps it, which ModelMacroCompileTests checks.)
        assertMacroExpansion(
            """
            @Model final class Counter {
                var count: Int = 7
                var label: String? = nil
                init() {}
            }
            """,
            expandedSource: """
            final class Counter {
            \(persisted("count", "Int"))
            \(persisted("label", "String?"))
                init() {}

            \(generatedMembers("Counter", [("count", "Int", nil), ("label", "String?", nil)], defaults: ["count": "7"]))
            }

            extension Counter: PGModel.PersistentModel {
            }

            extension Counter: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testTransientPropertiesAreNotPersisted() {
        assertMacroExpansion(
            """
            @Model final class Note {
                var text: String
                @Transient var isSelected = false
                @Transient var draft: String?
                @Transient lazy var words: [String] = text.split(separator: " ").map(String.init)
                @Transient let createdLocally = Date()
                init(text: String) { self.text = text }
            }
            """,
            expandedSource: """
            final class Note {
            \(persisted("text", "String"))
                @Transient var isSelected = false
                @Transient var draft: String?
                @Transient lazy var words: [String] = text.split(separator: " ").map(String.init)
                @Transient let createdLocally = Date()
                init(text: String) { self.text = text }

            \(generatedMembers("Note", [("text", "String", nil)]))
            }

            extension Note: PGModel.PersistentModel {
            }

            extension Note: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testAttributeOptionsAndOriginalNameAreCopiedVerbatim() {
        assertMacroExpansion(
            """
            @Model class Trip {
                @Attribute(.preserveValueOnDeletion)
                var name: String
                @Attribute(hashModifier: "v3")
                var destination: String
                @Attribute(.preserveValueOnDeletion, .spotlight, originalName: "start_date")
                var startDate: Date
                @Attribute var endDate: Date
                init() { name = ""; destination = ""; startDate = .now; endDate = .now }
            }
            """,
            expandedSource: """
            class Trip {
                @Attribute(.preserveValueOnDeletion)
                var name: String {
                    @storageRestrictions(initializes: _name)
                    init(initialValue) {
                        _name = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \\.name)
                        self._$willRead("name")
                        return _name
                    }
                    set {
                        self._$willRead("name")
                        let oldValue = _name
                        _$observationRegistrar.withMutation(of: self, keyPath: \\.name) {
                            _name = newValue
                        }
                        self._$didChange("name", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _name: String
                @Attribute(hashModifier: "v3")
                var destination: String {
                    @storageRestrictions(initializes: _destination)
                    init(initialValue) {
                        _destination = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \\.destination)
                        self._$willRead("destination")
                        return _destination
                    }
                    set {
                        self._$willRead("destination")
                        let oldValue = _destination
                        _$observationRegistrar.withMutation(of: self, keyPath: \\.destination) {
                            _destination = newValue
                        }
                        self._$didChange("destination", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _destination: String
                @Attribute(.preserveValueOnDeletion, .spotlight, originalName: "start_date")
                var startDate: Date {
                    @storageRestrictions(initializes: _startDate)
                    init(initialValue) {
                        _startDate = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \\.startDate)
                        self._$willRead("startDate")
                        return _startDate
                    }
                    set {
                        self._$willRead("startDate")
                        let oldValue = _startDate
                        _$observationRegistrar.withMutation(of: self, keyPath: \\.startDate) {
                            _startDate = newValue
                        }
                        self._$didChange("startDate", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _startDate: Date
                @Attribute
                var endDate: Date {
                    @storageRestrictions(initializes: _endDate)
                    init(initialValue) {
                        _endDate = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \\.endDate)
                        self._$willRead("endDate")
                        return _endDate
                    }
                    set {
                        self._$willRead("endDate")
                        let oldValue = _endDate
                        _$observationRegistrar.withMutation(of: self, keyPath: \\.endDate) {
                            _endDate = newValue
                        }
                        self._$didChange("endDate", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _endDate: Date
                init() { name = ""; destination = ""; startDate = .now; endDate = .now }

                @Transient lazy var _$backingData = PGModel.ModelBackingData()

                @Transient private lazy var _$observationRegistrar = Observation.ObservationRegistrar()

                required init(backingData: PGModel.ModelBackingData) throws {
                    self._name = try backingData.value(forKey: "name", codec: PGModel._AttributeCodecs.codec(String.self))
                    self._destination = try backingData.value(forKey: "destination", codec: PGModel._AttributeCodecs.codec(String.self))
                    self._startDate = try backingData.value(forKey: "startDate", codec: PGModel._AttributeCodecs.codec(Date.self))
                    self._endDate = try backingData.value(forKey: "endDate", codec: PGModel._AttributeCodecs.codec(Date.self))
                    self._$backingData = backingData
                    try self._$restoreInheritingValues(from: backingData)
                }

                func _$readStoredValues(into reader: inout PGModel._StoredValueReader) {
                    reader.read(self._name, PGModel._AttributeCodecs.codec(String.self))
                    reader.read(self._destination, PGModel._AttributeCodecs.codec(String.self))
                    reader.read(self._startDate, PGModel._AttributeCodecs.codec(Date.self))
                    reader.read(self._endDate, PGModel._AttributeCodecs.codec(Date.self))
                }

                func _$restoreInheritingValues(from backingData: PGModel.ModelBackingData) throws {
                }

                static func _$schemaMetadata_Trip<Root: Trip>(rootedAt _: Root.Type) -> [PGModel.Schema.PropertyMetadata] {
                    [
                        PGModel.Schema.PropertyMetadata(name: "name", keypath: \\Root.name, codec: PGModel._AttributeCodecs.codec(String.self), metadata: PGModel.Schema.Attribute(.preserveValueOnDeletion), declaredKeypath: \\Trip.name),
                        PGModel.Schema.PropertyMetadata(name: "destination", keypath: \\Root.destination, codec: PGModel._AttributeCodecs.codec(String.self), metadata: PGModel.Schema.Attribute(hashModifier: "v3"), declaredKeypath: \\Trip.destination),
                        PGModel.Schema.PropertyMetadata(name: "startDate", keypath: \\Root.startDate, codec: PGModel._AttributeCodecs.codec(Date.self), metadata: PGModel.Schema.Attribute(.preserveValueOnDeletion, .spotlight, originalName: "start_date"), declaredKeypath: \\Trip.startDate),
                        PGModel.Schema.PropertyMetadata(name: "endDate", keypath: \\Root.endDate, codec: PGModel._AttributeCodecs.codec(Date.self), metadata: PGModel.Schema.Attribute(), declaredKeypath: \\Trip.endDate)
                    ]
                }

                class var schemaMetadata: [PGModel.Schema.PropertyMetadata] {
                    _$schemaMetadata_Trip(rootedAt: Self.self)
                }

                class var _$uniquenessConstraints: [[String]] {
                    []
                }

                class var _$globalUniquenessConstraints: [[String]] {
                    []
                }

                class var _$indexes: [PGModel.Schema.IndexMetadata] {
                    []
                }

                class var _$superentity: (any PGModel.PersistentModel.Type)? {
                    nil
                }
            }

            extension Trip: PGModel.PersistentModel {
            }

            extension Trip: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testSingleUniqueAndIndexGroup() {
        assertMacroExpansion(
            #"""
            @Model final class Person {
                #Unique<Person>([\.email])
                #Index<Person>([\Person.name])
                var email: String
                var name: String
                init(email: String, name: String) { self.email = email; self.name = name }
            }
            """#,
            expandedSource: """
            final class Person {
            \(persisted("email", "String"))
            \(persisted("name", "String"))
                init(email: String, name: String) { self.email = email; self.name = name }

            \(generatedMembers("Person", [("email", "String", nil), ("name", "String", nil)],
                               uniqueness: #"[["email"]]"#, indexes: #"[.binary(["name"])]"#))
            }

            extension Person: PGModel.PersistentModel {
            }

            extension Person: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testMultipleUniqueAndIndexGroups() {
        assertMacroExpansion(
            #"""
            @Model class Trip {
                #Unique<Trip>([\.name, \.startDate, \.endDate], [\.code])
                #Unique<Trip>([\.destination])
                #Index<Trip>([\.name], [\.startDate], [\.endDate], [\.name, \.startDate, \.endDate])
                var name: String
                var code: String
                var destination: String
                var startDate: Date
                var endDate: Date
                init() { name = ""; code = ""; destination = ""; startDate = .now; endDate = .now }
            }
            """#,
            expandedSource: """
            class Trip {
                var name: String {
                    @storageRestrictions(initializes: _name)
                    init(initialValue) {
                        _name = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \\.name)
                        self._$willRead("name")
                        return _name
                    }
                    set {
                        self._$willRead("name")
                        let oldValue = _name
                        _$observationRegistrar.withMutation(of: self, keyPath: \\.name) {
                            _name = newValue
                        }
                        self._$didChange("name", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _name: String
                var code: String {
                    @storageRestrictions(initializes: _code)
                    init(initialValue) {
                        _code = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \\.code)
                        self._$willRead("code")
                        return _code
                    }
                    set {
                        self._$willRead("code")
                        let oldValue = _code
                        _$observationRegistrar.withMutation(of: self, keyPath: \\.code) {
                            _code = newValue
                        }
                        self._$didChange("code", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _code: String
                var destination: String {
                    @storageRestrictions(initializes: _destination)
                    init(initialValue) {
                        _destination = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \\.destination)
                        self._$willRead("destination")
                        return _destination
                    }
                    set {
                        self._$willRead("destination")
                        let oldValue = _destination
                        _$observationRegistrar.withMutation(of: self, keyPath: \\.destination) {
                            _destination = newValue
                        }
                        self._$didChange("destination", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _destination: String
                var startDate: Date {
                    @storageRestrictions(initializes: _startDate)
                    init(initialValue) {
                        _startDate = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \\.startDate)
                        self._$willRead("startDate")
                        return _startDate
                    }
                    set {
                        self._$willRead("startDate")
                        let oldValue = _startDate
                        _$observationRegistrar.withMutation(of: self, keyPath: \\.startDate) {
                            _startDate = newValue
                        }
                        self._$didChange("startDate", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _startDate: Date
                var endDate: Date {
                    @storageRestrictions(initializes: _endDate)
                    init(initialValue) {
                        _endDate = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \\.endDate)
                        self._$willRead("endDate")
                        return _endDate
                    }
                    set {
                        self._$willRead("endDate")
                        let oldValue = _endDate
                        _$observationRegistrar.withMutation(of: self, keyPath: \\.endDate) {
                            _endDate = newValue
                        }
                        self._$didChange("endDate", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _endDate: Date
                init() { name = ""; code = ""; destination = ""; startDate = .now; endDate = .now }

                @Transient lazy var _$backingData = PGModel.ModelBackingData()

                @Transient private lazy var _$observationRegistrar = Observation.ObservationRegistrar()

                required init(backingData: PGModel.ModelBackingData) throws {
                    self._name = try backingData.value(forKey: "name", codec: PGModel._AttributeCodecs.codec(String.self))
                    self._code = try backingData.value(forKey: "code", codec: PGModel._AttributeCodecs.codec(String.self))
                    self._destination = try backingData.value(forKey: "destination", codec: PGModel._AttributeCodecs.codec(String.self))
                    self._startDate = try backingData.value(forKey: "startDate", codec: PGModel._AttributeCodecs.codec(Date.self))
                    self._endDate = try backingData.value(forKey: "endDate", codec: PGModel._AttributeCodecs.codec(Date.self))
                    self._$backingData = backingData
                    try self._$restoreInheritingValues(from: backingData)
                }

                func _$readStoredValues(into reader: inout PGModel._StoredValueReader) {
                    reader.read(self._name, PGModel._AttributeCodecs.codec(String.self))
                    reader.read(self._code, PGModel._AttributeCodecs.codec(String.self))
                    reader.read(self._destination, PGModel._AttributeCodecs.codec(String.self))
                    reader.read(self._startDate, PGModel._AttributeCodecs.codec(Date.self))
                    reader.read(self._endDate, PGModel._AttributeCodecs.codec(Date.self))
                }

                func _$restoreInheritingValues(from backingData: PGModel.ModelBackingData) throws {
                }

                static func _$schemaMetadata_Trip<Root: Trip>(rootedAt _: Root.Type) -> [PGModel.Schema.PropertyMetadata] {
                    [
                        PGModel.Schema.PropertyMetadata(name: "name", keypath: \\Root.name, codec: PGModel._AttributeCodecs.codec(String.self), declaredKeypath: \\Trip.name),
                        PGModel.Schema.PropertyMetadata(name: "code", keypath: \\Root.code, codec: PGModel._AttributeCodecs.codec(String.self), declaredKeypath: \\Trip.code),
                        PGModel.Schema.PropertyMetadata(name: "destination", keypath: \\Root.destination, codec: PGModel._AttributeCodecs.codec(String.self), declaredKeypath: \\Trip.destination),
                        PGModel.Schema.PropertyMetadata(name: "startDate", keypath: \\Root.startDate, codec: PGModel._AttributeCodecs.codec(Date.self), declaredKeypath: \\Trip.startDate),
                        PGModel.Schema.PropertyMetadata(name: "endDate", keypath: \\Root.endDate, codec: PGModel._AttributeCodecs.codec(Date.self), declaredKeypath: \\Trip.endDate)
                    ]
                }

                class var schemaMetadata: [PGModel.Schema.PropertyMetadata] {
                    _$schemaMetadata_Trip(rootedAt: Self.self)
                }

                class var _$uniquenessConstraints: [[String]] {
                    [["name", "startDate", "endDate"], ["code"], ["destination"]]
                }

                class var _$globalUniquenessConstraints: [[String]] {
                    []
                }

                class var _$indexes: [PGModel.Schema.IndexMetadata] {
                    [.binary(["name"]), .binary(["startDate"]), .binary(["endDate"]), .binary(["name", "startDate", "endDate"])]
                }

                class var _$superentity: (any PGModel.PersistentModel.Type)? {
                    nil
                }
            }

            extension Trip: PGModel.PersistentModel {
            }

            extension Trip: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testComputedPropertiesAreLeftAlone() {
        assertMacroExpansion(
            """
            @Model final class Track {
                var duration: Double
                var minutes: Int { Int(duration) / 60 }
                var seconds: Int {
                    get { Int(duration) % 60 }
                    set { duration = Double(minutes * 60 + newValue) }
                }
                @Transient var formatted: String {
                    "\\(minutes):\\(seconds)"
                }
                init(duration: Double) { self.duration = duration }
            }
            """,
            expandedSource: """
            final class Track {
            \(persisted("duration", "Double"))
                var minutes: Int { Int(duration) / 60 }
                var seconds: Int {
                    get { Int(duration) % 60 }
                    set { duration = Double(minutes * 60 + newValue) }
                }
                @Transient var formatted: String {
                    "\\(minutes):\\(seconds)"
                }
                init(duration: Double) { self.duration = duration }

            \(generatedMembers("Track", [("duration", "Double", nil)]))
            }

            extension Track: PGModel.PersistentModel {
            }

            extension Track: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testStaticPropertiesAndUnderscoredPropertiesAreLeftAlone() {
        assertMacroExpansion(
            """
            @Model final class Track {
                static let defaultTitle = "Untitled"
                static var plays = 0
                class var kind: String { "track" }
                private var _cache: [String: Int] = [:]
                var title: String
                init(title: String) { self.title = title }
            }
            """,
            expandedSource: """
            final class Track {
                static let defaultTitle = "Untitled"
                static var plays = 0
                class var kind: String { "track" }
                private var _cache: [String: Int] = [:]
            \(persisted("title", "String"))
                init(title: String) { self.title = title }

            \(generatedMembers("Track", [("title", "String", nil)]))
            }

            extension Track: PGModel.PersistentModel {
            }

            extension Track: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testNestedModelExtendsTheQualifiedType() {
        assertMacroExpansion(
            """
            enum SchemaV2 {
                @Model class Trip {
                    var name: String
                    init(name: String) { self.name = name }
                }
            }
            """,
            expandedSource: """
            enum SchemaV2 {
                class Trip {
                    var name: String {
                        @storageRestrictions(initializes: _name)
                        init(initialValue) {
                            _name = initialValue
                        }
                        get {
                            _$observationRegistrar.access(self, keyPath: \\.name)
                            self._$willRead("name")
                            return _name
                        }
                        set {
                            self._$willRead("name")
                            let oldValue = _name
                            _$observationRegistrar.withMutation(of: self, keyPath: \\.name) {
                                _name = newValue
                            }
                            self._$didChange("name", from: oldValue, to: newValue)
                        }
                    }

                    @Transient private var _name: String
                    init(name: String) { self.name = name }

                    @Transient lazy var _$backingData = PGModel.ModelBackingData()

                    @Transient private lazy var _$observationRegistrar = Observation.ObservationRegistrar()

                    required init(backingData: PGModel.ModelBackingData) throws {
                        self._name = try backingData.value(forKey: "name", codec: PGModel._AttributeCodecs.codec(String.self))
                        self._$backingData = backingData
                        try self._$restoreInheritingValues(from: backingData)
                    }

                    func _$readStoredValues(into reader: inout PGModel._StoredValueReader) {
                        reader.read(self._name, PGModel._AttributeCodecs.codec(String.self))
                    }

                    func _$restoreInheritingValues(from backingData: PGModel.ModelBackingData) throws {
                    }

                    static func _$schemaMetadata_Trip<Root: Trip>(rootedAt _: Root.Type) -> [PGModel.Schema.PropertyMetadata] {
                        [
                            PGModel.Schema.PropertyMetadata(name: "name", keypath: \\Root.name, codec: PGModel._AttributeCodecs.codec(String.self), declaredKeypath: \\Trip.name)
                        ]
                    }

                    class var schemaMetadata: [PGModel.Schema.PropertyMetadata] {
                        _$schemaMetadata_Trip(rootedAt: Self.self)
                    }

                    class var _$uniquenessConstraints: [[String]] {
                        []
                    }

                    class var _$globalUniquenessConstraints: [[String]] {
                        []
                    }

                    class var _$indexes: [PGModel.Schema.IndexMetadata] {
                        []
                    }

                    class var _$superentity: (any PGModel.PersistentModel.Type)? {
                        nil
                    }
                }
            }

            extension SchemaV2.Trip: PGModel.PersistentModel {
            }

            extension SchemaV2.Trip: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testMainActorModelGetsAnIsolatedConformance() {
        assertMacroExpansion(
            """
            @MainActor
            @Model final class Track {
                var title: String
                init(title: String) { self.title = title }
            }
            """,
            expandedSource: """
            @MainActor
            final class Track {
            \(persisted("title", "String"))
                init(title: String) { self.title = title }

            \(generatedMembers("Track", [("title", "String", nil)]))
            }

            extension Track: @MainActor PGModel.PersistentModel {
            }

            extension Track: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testExistingConformanceAddsNoExtension() {
        // The compiler passes only the protocols the class does not already conform to.
        assertMacroExpansion(
            """
            @Model final class Note: PersistentModel {
                init() {}
            }
            """,
            expandedSource: """
            final class Note: PersistentModel {
                init() {}

            \(generatedMembers("Note", []))
            }
            """,
            macroSpecs: modelMacroSpecs.merging(
                ["Model": .init(type: ModelMacro.self, conformances: [])], uniquingKeysWith: { $1 }
            )
        )
    }

    func testBacktickedPropertyName() {
        assertMacroExpansion(
            """
            @Model final class Rule {
                var `default`: Bool
                init() { self.default = false }
            }
            """,
            expandedSource: #"""
            final class Rule {
                var `default`: Bool {
                    @storageRestrictions(initializes: _default)
                    init(initialValue) {
                        _default = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \.`default`)
                        self._$willRead("default")
                        return _default
                    }
                    set {
                        self._$willRead("default")
                        let oldValue = _default
                        _$observationRegistrar.withMutation(of: self, keyPath: \.`default`) {
                            _default = newValue
                        }
                        self._$didChange("default", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _default: Bool
                init() { self.default = false }

                @Transient lazy var _$backingData = PGModel.ModelBackingData()

                @Transient private lazy var _$observationRegistrar = Observation.ObservationRegistrar()

                required init(backingData: PGModel.ModelBackingData) throws {
                    self._default = try backingData.value(forKey: "default", codec: PGModel._AttributeCodecs.codec(Bool.self))
                    self._$backingData = backingData
                }

                func _$readStoredValues(into reader: inout PGModel._StoredValueReader) {
                    reader.read(self._default, PGModel._AttributeCodecs.codec(Bool.self))
                }

                static var schemaMetadata: [PGModel.Schema.PropertyMetadata] {
                    [
                        PGModel.Schema.PropertyMetadata(name: "default", keypath: \Rule.`default`, codec: PGModel._AttributeCodecs.codec(Bool.self))
                    ]
                }
            }

            extension Rule: PGModel.PersistentModel {
            }

            extension Rule: Observation.Observable {
            }
            """#,
            macroSpecs: modelMacroSpecs
        )
    }
}
