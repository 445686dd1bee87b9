import Foundation

/// What a ``ModelContext`` remembers only to go faster: per-class facts it would otherwise work out again
/// for every model it builds, inserts or saves. Nothing here changes what a call returns; a context with
/// empty caches answers the same, only slower. Kept apart from the context's state (its registry, its
/// pending changes) so a reader of `ModelContext` sees which is which.
///
/// ```swift
/// if let last = caches.lastStorageTraits, last.type == ObjectIdentifier(Trip.self) { return last.traits }
/// ```
struct ContextCaches {
    /// Per model class: what building a fetched instance needs to know about its properties.
    var storageTraits: [ObjectIdentifier: StorageTraits] = [:]
    /// The class whose traits were asked for last, and its traits: a fetch builds many rows of one class.
    var lastStorageTraits: (type: ObjectIdentifier, traits: StorageTraits)?
    /// The class of the last row built by its stored entity name (see `materializeConcrete(_:)`).
    var lastConcreteClass: (name: String, type: any PersistentModel.Type)?
    /// Per model class: the stored properties an insert writes (see `insertedRow(of:in:)`).
    var insertShapes: [ObjectIdentifier: ModelContext.InsertShape] = [:]
    /// The relationships of the class last asked about: a bulk insert or save looks them up once, not
    /// once per model (a lock and a copy of the class's description each time).
    var relationshipsOfLastClass = RelationshipsByClass()
}
