import PGModelMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import SwiftSyntaxMacrosTestSupport
import XCTest

/// `#Unique(…, scope:)` and `@Attribute(.globallyUnique)`: groups unique across all users go to
/// `_$globalUniquenessConstraints`, groups per owner stay in `_$uniquenessConstraints`.
final class UniquenessScopeExpansionTests: XCTestCase {
    private let subclassSpecs = modelMacroSpecs.merging(
        ["Model": MacroSpec(type: ModelMacro.self, conformances: [])], uniquingKeysWith: { $1 }
    )

    func testScopesGoToTheirOwnLists() {
        assertMacroExpansion(
            #"""
            @Model final class Member {
                #Unique<Member>([\.slug, \.region], scope: .allUsers)
                #Unique<Member>([\.nickname])
                #Unique<Member>([\.region, \.nickname], scope: UniquenessScope.owner)
                #Unique<Member>([\.email], scope: PGModel.UniquenessScope.allUsers)
                @Attribute(.globallyUnique) var handle: String
                var nickname: String
                var slug: String
                var region: String
                var email: String
                init() { handle = ""; nickname = ""; slug = ""; region = ""; email = "" }
            }
            """#,
            expandedSource: """
            final class Member {
            \(persisted("handle", "String", attributes: ["@Attribute(.globallyUnique)"]))
            \(persisted("nickname", "String"))
            \(persisted("slug", "String"))
            \(persisted("region", "String"))
            \(persisted("email", "String"))
                init() { handle = ""; nickname = ""; slug = ""; region = ""; email = "" }

            \(generatedMembers("Member", [("handle", "String", attribute(".globallyUnique")), ("nickname", "String", nil),
                                          ("slug", "String", nil), ("region", "String", nil), ("email", "String", nil)],
                               uniqueness: #"[["nickname"], ["region", "nickname"]]"#,
                               globalUniqueness: #"[["slug", "region"], ["email"]]"#))
            }

            extension Member: PGModel.PersistentModel {
            }

            extension Member: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testOnlyGlobalGroupsLeaveThePerOwnerListToTheDefault() {
        assertMacroExpansion(
            #"""
            @Model final class Member {
                #Unique<Member>([\.handle], scope: .allUsers)
                var handle: String
                init(handle: String) { self.handle = handle }
            }
            """#,
            expandedSource: """
            final class Member {
            \(persisted("handle", "String"))
                init(handle: String) { self.handle = handle }

            \(generatedMembers("Member", [("handle", "String", nil)], globalUniqueness: #"[["handle"]]"#))
            }

            extension Member: PGModel.PersistentModel {
            }

            extension Member: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testBaseClassDeclaresBothListsForItsSubclasses() {
        assertMacroExpansion(
            #"""
            @Model class Account {
                #Unique<Account>([\.handle], scope: .allUsers)
                var handle: String
                init(handle: String) { self.handle = handle }
            }
            """#,
            expandedSource: """
            class Account {
            \(persisted("handle", "String"))
                init(handle: String) { self.handle = handle }

                @Transient lazy var _$backingData = PGModel.ModelBackingData()

                @Transient private lazy var _$observationRegistrar = Observation.ObservationRegistrar()

                required init(backingData: PGModel.ModelBackingData) throws {
                    self._handle = try backingData.value(forKey: "handle", codec: PGModel._AttributeCodecs.codec(String.self))
                    self._$backingData = backingData
                    try self._$restoreInheritingValues(from: backingData)
                }

                func _$readStoredValues(into reader: inout PGModel._StoredValueReader) {
                    reader.read(self._handle, PGModel._AttributeCodecs.codec(String.self))
                }

                func _$restoreInheritingValues(from backingData: PGModel.ModelBackingData) throws {
                }

                static func _$schemaMetadata_Account<Root: Account>(rootedAt _: Root.Type) -> [PGModel.Schema.PropertyMetadata] {
                    [
                        PGModel.Schema.PropertyMetadata(name: "handle", keypath: \\Root.handle, codec: PGModel._AttributeCodecs.codec(String.self), declaredKeypath: \\Account.handle)
                    ]
                }

                class var schemaMetadata: [PGModel.Schema.PropertyMetadata] {
                    _$schemaMetadata_Account(rootedAt: Self.self)
                }

                class var _$uniquenessConstraints: [[String]] {
                    []
                }

                class var _$globalUniquenessConstraints: [[String]] {
                    [["handle"]]
                }

                class var _$indexes: [PGModel.Schema.IndexMetadata] {
                    []
                }

                class var _$superentity: (any PGModel.PersistentModel.Type)? {
                    nil
                }
            }

            extension Account: PGModel.PersistentModel {
            }

            extension Account: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testSubclassAddsItsGlobalGroupsToItsSuperclasses() {
        assertMacroExpansion(
            #"""
            @Model class Pro: Account {
                #Unique<Pro>([\.studio], scope: .allUsers)
                var studio: String
                init(handle: String, studio: String) { self.studio = studio; super.init(handle: handle) }
            }
            """#,
            expandedSource: """
            class Pro: Account {
            \(persisted("studio", "String"))
                init(handle: String, studio: String) { self.studio = studio; super.init(handle: handle) }

                @Transient private lazy var _$observationRegistrar = Observation.ObservationRegistrar()

                required init(backingData: PGModel.ModelBackingData) throws {
                    self._studio = try backingData.value(forKey: "studio", codec: PGModel._AttributeCodecs.codec(String.self))
                    try super.init(backingData: backingData)
                }

                override func _$readStoredValues(into reader: inout PGModel._StoredValueReader) {
                    super._$readStoredValues(into: &reader)
                    reader.read(self._studio, PGModel._AttributeCodecs.codec(String.self))
                }

                static func _$schemaMetadata_Pro<Root: Pro>(rootedAt _: Root.Type) -> [PGModel.Schema.PropertyMetadata] {
                    [
                        PGModel.Schema.PropertyMetadata(name: "studio", keypath: \\Root.studio, codec: PGModel._AttributeCodecs.codec(String.self), declaredKeypath: \\Pro.studio)
                    ]
                }

                override class var schemaMetadata: [PGModel.Schema.PropertyMetadata] {
                    super.schemaMetadata + _$schemaMetadata_Pro(rootedAt: Self.self)
                }

                override class var _$superentity: (any PGModel.PersistentModel.Type)? {
                    Account.self
                }

                override class var _$globalUniquenessConstraints: [[String]] {
                    super._$globalUniquenessConstraints + [["studio"]]
                }
            }
            """,
            macroSpecs: subclassSpecs
        )
    }

    func testScopeMustBeALiteral() {
        assertMacroExpansion(
            #"""
            @Model final class Member {
                #Unique<Member>([\.handle], scope: chosenScope)
                var handle: String
                init() { handle = "" }
            }
            """#,
            expandedSource: """
            final class Member {
            \(persisted("handle", "String"))
                init() { handle = "" }

            \(generatedMembers("Member", [("handle", "String", nil)]))
            }

            extension Member: PGModel.PersistentModel {
            }

            extension Member: Observation.Observable {
            }
            """,
            diagnostics: [DiagnosticSpec(
                message: #"#Unique's scope is read from the source, so write it as `.owner` or `.allUsers`, e.g. `#Unique<Member>([\.handle], scope: .allUsers)`."#,
                line: 2, column: 33
            )],
            macroSpecs: modelMacroSpecs
        )
    }
}
