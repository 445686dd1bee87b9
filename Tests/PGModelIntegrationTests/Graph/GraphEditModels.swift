import Foundation
@_spi(PGModelInternals) import PGModel

/// A model graph with every kind of relationship an app edits: optional and non-optional to-one,
/// optional and non-optional to-many, one-to-one, many-to-many, `.cascade`, `.nullify` and `.deny`,
/// and a subclass. The randomized graph-edit test drives it; its names are unique to it, so it shares
/// the seed ports' service without clashing. Version 1 of a migration plan (``EditGraphV2``).
enum EditGraph: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }

    @Model
    class GraphFolder {
        var name: String
        /// An optional to-many, as apps that sync through CloudKit must declare them.
        @Relationship(deleteRule: .cascade, inverse: \GraphDoc.folder) var docs: [GraphDoc]? = []
        @Relationship(deleteRule: .nullify, inverse: \GraphTag.folder) var tags: [GraphTag] = []
        /// One-to-one.
        @Relationship(deleteRule: .cascade, inverse: \GraphCover.folder) var cover: GraphCover?
        @Relationship(deleteRule: .deny, inverse: \GraphLock.folder) var locks: [GraphLock] = []

        init(name: String) { self.name = name }
    }

    @Model
    class GraphArchive: GraphFolder {
        var shelf: Int = 0

        init(name: String, shelf: Int) {
            self.shelf = shelf
            super.init(name: name)
        }
    }

    @Model
    class GraphDoc {
        var title: String
        var folder: GraphFolder?
        /// Many-to-many with ``GraphTag/docs``.
        @Relationship(deleteRule: .nullify, inverse: \GraphTag.docs) var tags: [GraphTag] = []
        @Relationship(deleteRule: .cascade, inverse: \GraphNote.doc) var notes: [GraphNote] = []

        init(title: String) { self.title = title }
    }

    @Model
    class GraphTag {
        var label: String
        var folder: GraphFolder?
        var docs: [GraphDoc] = []

        init(label: String) { self.label = label }
    }

    @Model
    class GraphCover {
        var color: String
        var folder: GraphFolder?

        init(color: String) { self.color = color }
    }

    @Model
    class GraphLock {
        var code: String
        /// An optional attribute with a default that is not `nil`.
        var hint: String? = "none"
        var folder: GraphFolder?

        init(code: String) { self.code = code }
    }

    /// A non-optional to-one: a note always belongs to a doc.
    @Model
    class GraphNote {
        var text: String
        var doc: GraphDoc

        init(text: String, doc: GraphDoc) {
            self.text = text
            self.doc = doc
        }
    }

    static var models: [any PersistentModel.Type] {
        [GraphFolder.self, GraphArchive.self, GraphDoc.self, GraphTag.self, GraphCover.self, GraphLock.self, GraphNote.self]
    }
}

/// ``EditGraph`` with one more attribute, so that a migration plan has a stage whose `willMigrate` edits
/// the graph at random.
enum EditGraphV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] {
        [GraphFolder.self, GraphArchive.self, GraphDoc.self, GraphTag.self, GraphCover.self, GraphLock.self, GraphNote.self]
    }

    @Model
    class GraphFolder {
        var name: String
        @Relationship(deleteRule: .cascade, inverse: \GraphDoc.folder) var docs: [GraphDoc]? = []
        @Relationship(deleteRule: .nullify, inverse: \GraphTag.folder) var tags: [GraphTag] = []
        @Relationship(deleteRule: .cascade, inverse: \GraphCover.folder) var cover: GraphCover?
        @Relationship(deleteRule: .deny, inverse: \GraphLock.folder) var locks: [GraphLock] = []
        init(name: String) { self.name = name }
    }

    @Model
    class GraphArchive: GraphFolder {
        var shelf: Int = 0
        init(name: String, shelf: Int) {
            self.shelf = shelf
            super.init(name: name)
        }
    }

    @Model
    class GraphDoc {
        var title: String
        /// New in version 2.
        var pages: Int = 1
        var folder: GraphFolder?
        @Relationship(deleteRule: .nullify, inverse: \GraphTag.docs) var tags: [GraphTag] = []
        @Relationship(deleteRule: .cascade, inverse: \GraphNote.doc) var notes: [GraphNote] = []
        init(title: String) { self.title = title }
    }

    @Model
    class GraphTag {
        var label: String
        var folder: GraphFolder?
        var docs: [GraphDoc] = []
        init(label: String) { self.label = label }
    }

    @Model
    class GraphCover {
        var color: String
        var folder: GraphFolder?
        init(color: String) { self.color = color }
    }

    @Model
    class GraphLock {
        var code: String
        var hint: String? = "none"
        var folder: GraphFolder?
        init(code: String) { self.code = code }
    }

    @Model
    class GraphNote {
        var text: String
        var doc: GraphDoc
        init(text: String, doc: GraphDoc) {
            self.text = text
            self.doc = doc
        }
    }
}
