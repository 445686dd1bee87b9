import PGModelMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosTestSupport
import XCTest

/// `@Model` on class hierarchies: a non-final root gets overridable `class var`s, a subclass overrides
/// them and chains `init(backingData:)` to its superclass, and a final class keeps its static shape.
final class InheritanceExpansionTests: XCTestCase {
    /// A subclass already conforms through its superclass, so the compiler passes no protocols.
    private let subclassSpecs = modelMacroSpecs.merging(
        ["Model": MacroSpec(type: ModelMacro.self, conformances: [])], uniquingKeysWith: { $1 }
    )

    func testNonFinalBaseClassHasOverridableMembers() {
        assertMacroExpansion(
            #"""
            @Model class Trip {
                #Unique<Trip>([\.name])
                var name: String
                var destination: Place?
                init(name: String) { self.name = name }
            }
            """#,
            expandedSource: #"""
            class Trip {
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
                var destination: Place? {
                    @storageRestrictions(initializes: _destination)
                    init(initialValue) {
                        _destination = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \.destination)
                        self._$willRead("destination")
                        return _destination
                    }
                    set {
                        self._$willRead("destination")
                        let oldValue = _destination
                        _$observationRegistrar.withMutation(of: self, keyPath: \.destination) {
                            _destination = newValue
                        }
                        self._$didChange("destination", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _destination: Optional<Place>
                init(name: String) { self.name = name }

                @Transient lazy var _$backingData = PGModel.ModelBackingData()

                @Transient private lazy var _$observationRegistrar = Observation.ObservationRegistrar()

                required init(backingData: PGModel.ModelBackingData) throws {
                    self._name = try backingData.value(forKey: "name", codec: PGModel._AttributeCodecs.codec(String.self))
                    self._destination = try backingData.value(forKey: "destination", codec: PGModel._AttributeCodecs.codec(Place?.self))
                    self._$backingData = backingData
                    try self._$restoreInheritingValues(from: backingData)
                }

                func _$readStoredValues(into reader: inout PGModel._StoredValueReader) {
                    reader.read(self._name, PGModel._AttributeCodecs.codec(String.self))
                    reader.read(self._destination, PGModel._AttributeCodecs.codec(Place?.self))
                }

                func _$restoreInheritingValues(from backingData: PGModel.ModelBackingData) throws {
                }

                static func _$schemaMetadata_Trip<Root: Trip>(rootedAt _: Root.Type) -> [PGModel.Schema.PropertyMetadata] {
                    [
                        PGModel.Schema.PropertyMetadata(name: "name", keypath: \Root.name, codec: PGModel._AttributeCodecs.codec(String.self), declaredKeypath: \Trip.name),
                        PGModel.Schema.PropertyMetadata(name: "destination", keypath: \Root.destination, codec: PGModel._AttributeCodecs.codec(Place?.self), declaredKeypath: \Trip.destination)
                    ]
                }

                class var schemaMetadata: [PGModel.Schema.PropertyMetadata] {
                    _$schemaMetadata_Trip(rootedAt: Self.self)
                }

                class var _$uniquenessConstraints: [[String]] {
                    [["name"]]
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
            """#,
            macroSpecs: modelMacroSpecs
        )
    }

    func testSubclass() {
        assertMacroExpansion(
            """
            @Model class BusinessTrip: Trip {
                var perdiem: Double = 0.0
                init(name: String, perdiem: Double) { self.perdiem = perdiem; super.init(name: name) }
            }
            """,
            expandedSource: #"""
            class BusinessTrip: Trip {
                var perdiem: Double {
                    @storageRestrictions(initializes: _perdiem)
                    init(initialValue) {
                        _perdiem = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \.perdiem)
                        self._$willRead("perdiem")
                        return _perdiem
                    }
                    set {
                        self._$willRead("perdiem")
                        let oldValue = _perdiem
                        _$observationRegistrar.withMutation(of: self, keyPath: \.perdiem) {
                            _perdiem = newValue
                        }
                        self._$didChange("perdiem", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _perdiem: Double
                init(name: String, perdiem: Double) { self.perdiem = perdiem; super.init(name: name) }

                @Transient private lazy var _$observationRegistrar = Observation.ObservationRegistrar()

                required init(backingData: PGModel.ModelBackingData) throws {
                    self._perdiem = try backingData.value(forKey: "perdiem", codec: PGModel._AttributeCodecs.codec(Double.self))
                    try super.init(backingData: backingData)
                }

                override func _$readStoredValues(into reader: inout PGModel._StoredValueReader) {
                    super._$readStoredValues(into: &reader)
                    reader.read(self._perdiem, PGModel._AttributeCodecs.codec(Double.self))
                }

                static func _$schemaMetadata_BusinessTrip<Root: BusinessTrip>(rootedAt _: Root.Type) -> [PGModel.Schema.PropertyMetadata] {
                    [
                        PGModel.Schema.PropertyMetadata(name: "perdiem", keypath: \Root.perdiem, codec: PGModel._AttributeCodecs.codec(Double.self), declaredKeypath: \BusinessTrip.perdiem, defaultValue: {
                                0.0
                            })
                    ]
                }

                override class var schemaMetadata: [PGModel.Schema.PropertyMetadata] {
                    super.schemaMetadata + _$schemaMetadata_BusinessTrip(rootedAt: Self.self)
                }

                override class var _$superentity: (any PGModel.PersistentModel.Type)? {
                    Trip.self
                }
            }
            """#,
            macroSpecs: subclassSpecs
        )
    }

    func testSubclassWithItsOwnUniqueAndIndex() {
        // `name` is inherited: the macro cannot see it, and leaves it to the runtime and type checker.
        assertMacroExpansion(
            #"""
            @Model public class BusinessTrip: Trip {
                #Unique<BusinessTrip>([\.name, \.company])
                #Index<BusinessTrip>([\.company])
                public var company: String
                @Relationship(deleteRule: .cascade) public var expenses: [Expense] = []
                public init(name: String, company: String) { self.company = company; super.init(name: name) }
            }
            """#,
            expandedSource: """
            public class BusinessTrip: Trip {
                public var company: String {
                    @storageRestrictions(initializes: _company)
                    init(initialValue) {
                        _company = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \\.company)
                        self._$willRead("company")
                        return _company
                    }
                    set {
                        self._$willRead("company")
                        let oldValue = _company
                        _$observationRegistrar.withMutation(of: self, keyPath: \\.company) {
                            _company = newValue
                        }
                        self._$didChange("company", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _company: String
                @Relationship(deleteRule: .cascade)
                public var expenses: [Expense] {
                    @storageRestrictions(initializes: _expenses)
                    init(initialValue) {
                        _expenses = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \\.expenses)
                        self._$willRead("expenses")
                        return _expenses
                    }
                    set {
                        self._$willRead("expenses")
                        let oldValue = _expenses
                        _$observationRegistrar.withMutation(of: self, keyPath: \\.expenses) {
                            _expenses = newValue
                        }
                        self._$didChange("expenses", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _expenses: [Expense]
                public init(name: String, company: String) { self.company = company; super.init(name: name) }

                @Transient private lazy var _$observationRegistrar = Observation.ObservationRegistrar()

                public required init(backingData: PGModel.ModelBackingData) throws {
                    self._company = try backingData.value(forKey: "company", codec: PGModel._AttributeCodecs.codec(String.self))
                    self._expenses = try backingData.value(forKey: "expenses", codec: PGModel._AttributeCodecs.codec([Expense].self))
                    try super.init(backingData: backingData)
                }

                public override func _$readStoredValues(into reader: inout PGModel._StoredValueReader) {
                    super._$readStoredValues(into: &reader)
                    reader.read(self._company, PGModel._AttributeCodecs.codec(String.self))
                    reader.read(self._expenses, PGModel._AttributeCodecs.codec([Expense].self))
                }

                public static func _$schemaMetadata_BusinessTrip<Root: BusinessTrip>(rootedAt _: Root.Type) -> [PGModel.Schema.PropertyMetadata] {
                    [
                        PGModel.Schema.PropertyMetadata(name: "company", keypath: \\Root.company, codec: PGModel._AttributeCodecs.codec(String.self), declaredKeypath: \\BusinessTrip.company),
                        PGModel.Schema.PropertyMetadata(name: "expenses", keypath: \\Root.expenses, codec: PGModel._AttributeCodecs.codec([Expense].self), metadata: PGModel.Schema.Relationship(deleteRule: .cascade), declaredKeypath: \\BusinessTrip.expenses, defaultValue: {
                                []
                            })
                    ]
                }

                public override class var schemaMetadata: [PGModel.Schema.PropertyMetadata] {
                    super.schemaMetadata + _$schemaMetadata_BusinessTrip(rootedAt: Self.self)
                }

                public override class var _$superentity: (any PGModel.PersistentModel.Type)? {
                    Trip.self
                }

                public override class var _$uniquenessConstraints: [[String]] {
                    super._$uniquenessConstraints + [["name", "company"]]
                }

                public override class var _$indexes: [PGModel.Schema.IndexMetadata] {
                    super._$indexes + [.binary(["company"])]
                }
            }
            """,
            macroSpecs: subclassSpecs
        )
    }

    func testSubclassesOfSubclassesAndSiblings() {
        assertMacroExpansion(
            #"""
            @Model class BusinessTrip: Trip, Codable {
                var company: String = ""
            }
            @Model final class ExecutiveTrip: BusinessTrip {
                #Index<ExecutiveTrip>([\.lounge])
                var lounge: String?
            }
            @Model open class PersonalTrip: Archive.Trip {
                var reason: Reason = .leisure
            }
            @Model final class DayTrip: PersonalTrip {
            }
            """#,
            expandedSource: #"""
            class BusinessTrip: Trip, Codable {
                var company: String {
                    @storageRestrictions(initializes: _company)
                    init(initialValue) {
                        _company = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \.company)
                        self._$willRead("company")
                        return _company
                    }
                    set {
                        self._$willRead("company")
                        let oldValue = _company
                        _$observationRegistrar.withMutation(of: self, keyPath: \.company) {
                            _company = newValue
                        }
                        self._$didChange("company", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _company: String

                @Transient private lazy var _$observationRegistrar = Observation.ObservationRegistrar()

                override func _$restoreInheritingValues(from backingData: PGModel.ModelBackingData) throws {
                    self._company = try backingData.value(forKey: "company", codec: PGModel._AttributeCodecs.codec(String.self))
                    try super._$restoreInheritingValues(from: backingData)
                }

                override func _$readStoredValues(into reader: inout PGModel._StoredValueReader) {
                    super._$readStoredValues(into: &reader)
                    reader.read(self._company, PGModel._AttributeCodecs.codec(String.self))
                }

                static func _$schemaMetadata_BusinessTrip<Root: BusinessTrip>(rootedAt _: Root.Type) -> [PGModel.Schema.PropertyMetadata] {
                    [
                        PGModel.Schema.PropertyMetadata(name: "company", keypath: \Root.company, codec: PGModel._AttributeCodecs.codec(String.self), declaredKeypath: \BusinessTrip.company, defaultValue: {
                                ""
                            })
                    ]
                }

                override class var schemaMetadata: [PGModel.Schema.PropertyMetadata] {
                    super.schemaMetadata + _$schemaMetadata_BusinessTrip(rootedAt: Self.self)
                }

                override class var _$superentity: (any PGModel.PersistentModel.Type)? {
                    Trip.self
                }
            }
            final class ExecutiveTrip: BusinessTrip {
                var lounge: String? {
                    @storageRestrictions(initializes: _lounge)
                    init(initialValue) {
                        _lounge = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \.lounge)
                        self._$willRead("lounge")
                        return _lounge
                    }
                    set {
                        self._$willRead("lounge")
                        let oldValue = _lounge
                        _$observationRegistrar.withMutation(of: self, keyPath: \.lounge) {
                            _lounge = newValue
                        }
                        self._$didChange("lounge", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _lounge: Optional<String>

                @Transient private lazy var _$observationRegistrar = Observation.ObservationRegistrar()

                override func _$restoreInheritingValues(from backingData: PGModel.ModelBackingData) throws {
                    self._lounge = try backingData.value(forKey: "lounge", codec: PGModel._AttributeCodecs.codec(String?.self))
                    try super._$restoreInheritingValues(from: backingData)
                }

                override func _$readStoredValues(into reader: inout PGModel._StoredValueReader) {
                    super._$readStoredValues(into: &reader)
                    reader.read(self._lounge, PGModel._AttributeCodecs.codec(String?.self))
                }

                static func _$schemaMetadata_ExecutiveTrip<Root: ExecutiveTrip>(rootedAt _: Root.Type) -> [PGModel.Schema.PropertyMetadata] {
                    [
                        PGModel.Schema.PropertyMetadata(name: "lounge", keypath: \Root.lounge, codec: PGModel._AttributeCodecs.codec(String?.self), declaredKeypath: \ExecutiveTrip.lounge)
                    ]
                }

                override class var schemaMetadata: [PGModel.Schema.PropertyMetadata] {
                    super.schemaMetadata + _$schemaMetadata_ExecutiveTrip(rootedAt: Self.self)
                }

                override class var _$superentity: (any PGModel.PersistentModel.Type)? {
                    BusinessTrip.self
                }

                override class var _$indexes: [PGModel.Schema.IndexMetadata] {
                    super._$indexes + [.binary(["lounge"])]
                }
            }
            open class PersonalTrip: Archive.Trip {
                var reason: Reason {
                    @storageRestrictions(initializes: _reason)
                    init(initialValue) {
                        _reason = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \.reason)
                        self._$willRead("reason")
                        return _reason
                    }
                    set {
                        self._$willRead("reason")
                        let oldValue = _reason
                        _$observationRegistrar.withMutation(of: self, keyPath: \.reason) {
                            _reason = newValue
                        }
                        self._$didChange("reason", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _reason: Reason

                @Transient private lazy var _$observationRegistrar = Observation.ObservationRegistrar()

                open override func _$restoreInheritingValues(from backingData: PGModel.ModelBackingData) throws {
                    self._reason = try backingData.value(forKey: "reason", codec: PGModel._AttributeCodecs.codec(Reason.self))
                    try super._$restoreInheritingValues(from: backingData)
                }

                open override func _$readStoredValues(into reader: inout PGModel._StoredValueReader) {
                    super._$readStoredValues(into: &reader)
                    reader.read(self._reason, PGModel._AttributeCodecs.codec(Reason.self))
                }

                public static func _$schemaMetadata_PersonalTrip<Root: PersonalTrip>(rootedAt _: Root.Type) -> [PGModel.Schema.PropertyMetadata] {
                    [
                        PGModel.Schema.PropertyMetadata(name: "reason", keypath: \Root.reason, codec: PGModel._AttributeCodecs.codec(Reason.self), declaredKeypath: \PersonalTrip.reason, defaultValue: {
                                .leisure
                            })
                    ]
                }

                open override class var schemaMetadata: [PGModel.Schema.PropertyMetadata] {
                    super.schemaMetadata + _$schemaMetadata_PersonalTrip(rootedAt: Self.self)
                }

                open override class var _$superentity: (any PGModel.PersistentModel.Type)? {
                    Archive.Trip.self
                }
            }
            final class DayTrip: PersonalTrip {

                @Transient private lazy var _$observationRegistrar = Observation.ObservationRegistrar()

                override func _$restoreInheritingValues(from backingData: PGModel.ModelBackingData) throws {
                    try super._$restoreInheritingValues(from: backingData)
                }

                static func _$schemaMetadata_DayTrip<Root: DayTrip>(rootedAt _: Root.Type) -> [PGModel.Schema.PropertyMetadata] {
                    []
                }

                override class var schemaMetadata: [PGModel.Schema.PropertyMetadata] {
                    super.schemaMetadata
                }

                override class var _$superentity: (any PGModel.PersistentModel.Type)? {
                    PersonalTrip.self
                }
            }
            """#,
            macroSpecs: subclassSpecs
        )
    }

    func testFinalClassListingProtocolsKeepsItsStaticShape() {
        assertMacroExpansion(
            #"""
            @Model final class Trip: Hashable, TripProtocol {
                #Index<Trip>([\.name])
                var name: String
                init(name: String) { self.name = name }
            }
            """#,
            expandedSource: """
            final class Trip: Hashable, TripProtocol {
            \(persisted("name", "String"))
                init(name: String) { self.name = name }

            \(generatedMembers("Trip", [("name", "String", nil)], indexes: #"[.binary(["name"])]"#))
            }

            extension Trip: PGModel.PersistentModel {
            }

            extension Trip: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testUnknownFirstProtocolIsNotTakenForASuperclassWhenTheCompilerAsksForPersistentModel() {
        // `Named` could be a class by its spelling, but a class that still needs PersistentModel does
        // not inherit from a model. (The compiler passes the member role this list only when the
        // `@Model` declaration's member role lists `conformances:`.)
        assertMacroExpansion(
            """
            @Model final class Trip: Named {
                var name: String
                init(name: String) { self.name = name }
            }
            """,
            expandedSource: """
            final class Trip: Named {
            \(persisted("name", "String"))
                init(name: String) { self.name = name }

            \(generatedMembers("Trip", [("name", "String", nil)]))
            }

            extension Trip: PGModel.PersistentModel {
            }

            extension Trip: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }
}
