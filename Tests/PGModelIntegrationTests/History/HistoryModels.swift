import Foundation
@_spi(PGModelInternals) import PGModel

/// Models for the history and observer tests: a tombstoned attribute and a cascade.
enum HistoryNotes {
    @Model
    final class Folder {
        var name: String
        @Relationship(deleteRule: .cascade, inverse: \Note.folder)
        var notes: [Note] = []

        init(name: String) { self.name = name }
    }

    @Model
    final class Note {
        @Attribute(.preserveValueOnDeletion) var title: String
        var body: String
        var topic: String?
        var folder: Folder?

        init(title: String, body: String, topic: String? = nil) {
            self.title = title
            self.body = body
            self.topic = topic
        }
    }
}
