import Foundation
@_spi(PGModelInternals) import PGModelCore

extension ModelContext {
    /// Posted (object: the context) before a save with changes writes them, autosaves included.
    ///
    /// ```swift
    /// NotificationCenter.default.addObserver(forName: ModelContext.willSave, object: context, queue: nil) { _ in … }
    /// ```
    public static let willSave = Notification.Name("ModelContext.willSave")

    /// Posted (object: the context) after a save committed, autosaves included. `userInfo` holds the
    /// saved models' identifiers under ``NotificationKey`` raw values: `insertedIdentifiers`,
    /// `updatedIdentifiers`, `deletedIdentifiers` (each `[PersistentIdentifier]`; deletes include what
    /// delete rules cascaded to).
    ///
    /// ```swift
    /// NotificationCenter.default.addObserver(forName: ModelContext.didSave, object: context, queue: nil) { note in
    ///     let inserted = note.userInfo?[ModelContext.NotificationKey.insertedIdentifiers.rawValue] as? [PersistentIdentifier]
    /// }
    /// ```
    public static let didSave = Notification.Name("ModelContext.didSave")

    /// The `userInfo` keys of ``didSave``, as in SwiftData.
    public enum NotificationKey: String, Sendable {
        /// Not posted by PGModel (SwiftData's query generation token).
        case queryGeneration
        /// Not posted by PGModel.
        case invalidatedAllIdentifiers
        /// `[PersistentIdentifier]` of the inserted models (their final ids, after upserts).
        case insertedIdentifiers
        /// `[PersistentIdentifier]` of the updated models.
        case updatedIdentifiers
        /// `[PersistentIdentifier]` of the deleted models and rows.
        case deletedIdentifiers
    }

    func postWillSave() {
        NotificationCenter.default.post(name: Self.willSave, object: self)
    }

    func postDidSave(_ prepared: PreparedSave, result: SaveResult) {
        // A save's models come in runs of one class: its name is looked up once a run.
        var last: (type: ObjectIdentifier, name: String)?
        let store = container.storeIdentifier
        func identifier(_ model: any PersistentModel) -> PersistentIdentifier {
            let type = ObjectIdentifier(Swift.type(of: model))
            let name: String
            if let last, last.type == type {
                name = last.name
            } else {
                name = Swift.type(of: model)._$entityName
                last = (type, name)
            }
            return PersistentIdentifier(entityName: name, id: model._$backingData.id, storeIdentifier: store, isTemporary: false)
        }
        var deleted = prepared.deleted.map(identifier)
        let seen = Set(deleted.map(\.uuid))
        deleted += result.deleted.filter { !seen.contains($0.id) }.map {
            PersistentIdentifier(entityName: $0.entity, id: $0.id, storeIdentifier: store, isTemporary: false)
        }
        NotificationCenter.default.post(name: Self.didSave, object: self, userInfo: [
            NotificationKey.insertedIdentifiers.rawValue: prepared.inserted.map(identifier),
            NotificationKey.updatedIdentifiers.rawValue: prepared.changed.map(identifier),
            NotificationKey.deletedIdentifiers.rawValue: deleted,
        ])
    }
}
