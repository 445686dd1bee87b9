import PGModelMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosTestSupport
import XCTest

/// `@Model` with relationships: properties whose type is another model or an array of models get the
/// same accessors and codec call as attributes (the runtime's overloads tell them apart), and
/// `@Relationship(args)` becomes `metadata: PGModel.Schema.Relationship(args)`.
final class RelationshipExpansionTests: XCTestCase {
    func testToOneRelationshipWithOptions() {
        assertMacroExpansion(
            #"""
            @Model final class Track {
                var title: String
                @Relationship(.unique, deleteRule: .cascade, originalName: "record", inverse: \Album.tracks)
                var album: Album?
                var producer: Person?
                init(title: String) { self.title = title }
            }
            """#,
            expandedSource: """
            final class Track {
            \(persisted("title", "String"))
            \(persisted("album", "Album?", attributes: [#"@Relationship(.unique, deleteRule: .cascade, originalName: "record", inverse: \Album.tracks)"#]))
            \(persisted("producer", "Person?"))
                init(title: String) { self.title = title }

            \(generatedMembers("Track", [
                ("title", "String", nil),
                ("album", "Album?", relationship(#".unique, deleteRule: .cascade, originalName: "record", inverse: \Album.tracks"#)),
                ("producer", "Person?", nil),
            ]))
            }

            extension Track: PGModel.PersistentModel {
            }

            extension Track: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testToManyArraysWithDefaults() {
        // swift-syntax's test expander drops the `= …` defaults; the compiler keeps them and they reach
        // the storage through the init accessor.
        assertMacroExpansion(
            """
            @Model final class Trip {
                var name: String
                @Relationship(deleteRule: .cascade, minimumModelCount: 1, maximumModelCount: 50)
                var bucketList: [BucketListItem] = [BucketListItem]()
                var stops: [Stop] = []
                init(name: String) { self.name = name }
            }
            """,
            expandedSource: """
            final class Trip {
            \(persisted("name", "String"))
            \(persisted("bucketList", "[BucketListItem]", attributes: ["@Relationship(deleteRule: .cascade, minimumModelCount: 1, maximumModelCount: 50)"]))
            \(persisted("stops", "[Stop]"))
                init(name: String) { self.name = name }

            \(generatedMembers("Trip", [
                ("name", "String", nil),
                ("bucketList", "[BucketListItem]", relationship("deleteRule: .cascade, minimumModelCount: 1, maximumModelCount: 50")),
                ("stops", "[Stop]", nil),
            ], defaults: ["bucketList": "[BucketListItem]()", "stops": "[]"]))
            }

            extension Trip: PGModel.PersistentModel {
            }

            extension Trip: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testOptionalArrayAndGenericArraySpelling() {
        assertMacroExpansion(
            """
            @Model final class Playlist {
                @Relationship var tracks: [Track]?
                var favorites: Array<Track>
                init() { favorites = [] }
            }
            """,
            expandedSource: """
            final class Playlist {
            \(persisted("tracks", "[Track]?", attributes: ["@Relationship"]))
            \(persisted("favorites", "Array<Track>"))
                init() { favorites = [] }

            \(generatedMembers("Playlist", [
                ("tracks", "[Track]?", relationship("")),
                ("favorites", "Array<Track>", nil),
            ]))
            }

            extension Playlist: PGModel.PersistentModel {
            }

            extension Playlist: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testSelfReferentialFollowersAndFollowing() {
        assertMacroExpansion(
            #"""
            @Model final class User {
                var name: String
                @Relationship(deleteRule: .nullify, inverse: \User.following)
                var followers: [User] = []
                var following: [User] = []
                init(name: String) { self.name = name }
            }
            """#,
            expandedSource: """
            final class User {
            \(persisted("name", "String"))
            \(persisted("followers", "[User]", attributes: [#"@Relationship(deleteRule: .nullify, inverse: \User.following)"#]))
            \(persisted("following", "[User]"))
                init(name: String) { self.name = name }

            \(generatedMembers("User", [
                ("name", "String", nil),
                ("followers", "[User]", relationship(#"deleteRule: .nullify, inverse: \User.following"#)),
                ("following", "[User]", nil),
            ], defaults: ["followers": "[]", "following": "[]"]))
            }

            extension User: PGModel.PersistentModel {
            }

            extension User: Observation.Observable {
            }
            """,
            macroSpecs: modelMacroSpecs
        )
    }

    func testFullAccessorsOfAToOneRelationship() {
        // Spelled out once, so the shape the runtime relies on is visible without the helpers.
        assertMacroExpansion(
            """
            @Model final class Song {
                var album: Album?
                init() {}
            }
            """,
            expandedSource: #"""
            final class Song {
                var album: Album? {
                    @storageRestrictions(initializes: _album)
                    init(initialValue) {
                        _album = initialValue
                    }
                    get {
                        _$observationRegistrar.access(self, keyPath: \.album)
                        self._$willRead("album")
                        return _album
                    }
                    set {
                        self._$willRead("album")
                        let oldValue = _album
                        _$observationRegistrar.withMutation(of: self, keyPath: \.album) {
                            _album = newValue
                        }
                        self._$didChange("album", from: oldValue, to: newValue)
                    }
                }

                @Transient private var _album: Optional<Album>
                init() {}

                @Transient lazy var _$backingData = PGModel.ModelBackingData()

                @Transient private lazy var _$observationRegistrar = Observation.ObservationRegistrar()

                required init(backingData: PGModel.ModelBackingData) throws {
                    self._album = try backingData.value(forKey: "album", codec: PGModel._AttributeCodecs.codec(Album?.self))
                    self._$backingData = backingData
                }

                func _$readStoredValues(into reader: inout PGModel._StoredValueReader) {
                    reader.read(self._album, PGModel._AttributeCodecs.codec(Album?.self))
                }

                static var schemaMetadata: [PGModel.Schema.PropertyMetadata] {
                    [
                        PGModel.Schema.PropertyMetadata(name: "album", keypath: \Song.album, codec: PGModel._AttributeCodecs.codec(Album?.self))
                    ]
                }
            }

            extension Song: PGModel.PersistentModel {
            }

            extension Song: Observation.Observable {
            }
            """#,
            macroSpecs: modelMacroSpecs
        )
    }
}
