import Foundation
@_spi(PGModelInternals) import PGModelCore

/// A class that PGModel stores: what `@Model` makes of your class.
///
/// ```swift
/// @Model final class Trip {
///     var name: String
///     var destination: String
///     init(name: String, destination: String) { self.name = name; self.destination = destination }
/// }
/// ```
public protocol PersistentModel: AnyObject, Observable, Hashable, Identifiable {
    /// Creates an instance from stored values without running your initializer; `@Model` generates it.
    init(backingData: ModelBackingData) throws
    /// Identity and change tracking; `@Model` generates it.
    var _$backingData: ModelBackingData { get }
    /// The stored properties; `@Model` generates it.
    static var schemaMetadata: [Schema.PropertyMetadata] { get }
    /// Groups of property names unique together among the owner's models (`#Unique`); `@Model` generates it.
    static var _$uniquenessConstraints: [[String]] { get }
    /// Groups of property names unique together among every user's models (`#Unique(…, scope: .allUsers)`);
    /// `@Model` generates it.
    static var _$globalUniquenessConstraints: [[String]] { get }
    /// The indexes (`#Index`), each a kind and a group of property names; `@Model` generates it.
    static var _$indexes: [Schema.IndexMetadata] { get }
    /// The `@Model` superclass of a model subclass (`BusinessTrip` → `Trip`); `@Model` generates it.
    static var _$superentity: (any PersistentModel.Type)? { get }
    /// Reads every persisted property's value from its storage, in declaration order (see
    /// ``_StoredValueReader``); `@Model` generates it. The default reads nothing, and a save then reads
    /// the properties through their key paths.
    func _$readStoredValues(into reader: inout _StoredValueReader)
}

extension PersistentModel {
    public func _$readStoredValues(into reader: inout _StoredValueReader) {}
    public static var _$uniquenessConstraints: [[String]] { [] }
    public static var _$globalUniquenessConstraints: [[String]] { [] }
    public static var _$indexes: [Schema.IndexMetadata] { [] }
    public static var _$superentity: (any PersistentModel.Type)? { nil }

    /// The entity name: the class name. Worked out once per class: `String(describing:)` costs about a
    /// microsecond, and a save of many models asks once per model, some paths more.
    public static var _$entityName: String { EntityNameCache.shared.name(of: self) }

    /// The model's identity, stable from creation; an insert merged into an existing row by a uniqueness
    /// constraint takes that row's identity when saved.
    public var persistentModelID: PersistentIdentifier {
        // The dynamic class: a `BusinessTrip` seen through a `Trip` reference is still a BusinessTrip row,
        // and history, the identity map and `model(for:)` name it so.
        let data = _$backingData
        return PersistentIdentifier(entityName: type(of: self)._$entityName, id: data.id,
                                    storeIdentifier: data.context?.container.storeIdentifier, isTemporary: data.isUnsaved)
    }

    /// The context the model is inserted in or was fetched by.
    public var modelContext: ModelContext? { _$backingData.context }

    /// Whether the model has unsaved changes (including being newly inserted).
    public var hasChanges: Bool { _$backingData.state == .inserted || !_$backingData.changedKeys.isEmpty }

    /// Whether the model was deleted from its context (saved or not).
    public var isDeleted: Bool { _$backingData.state == .deleted }

    /// Called by generated setters: records that `key` changed so the next save writes it.
    public func _$didChange(_ key: String) {
        _$backingData.noteChange(key, of: self)
    }

    /// Called by generated setters with the old and new value: records the change and, for a
    /// relationship, keeps the inverse side of every added or removed model in step.
    public func _$didChange<Value>(_ key: String, from oldValue: Value, to newValue: Value) {
        _$backingData.noteChange(key, of: self, from: oldValue, to: newValue)
    }

    /// Called by generated getters and setters: loads `key` first if it is not loaded yet (a fault).
    @inlinable
    public func _$willRead(_ key: String) {
        if _$backingData.hasFaults { _$backingData.resolveFault(key, of: self) }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension PersistentModel where ID == PersistentIdentifier {
    /// Models without an `id` property of their own are identified by ``persistentModelID``.
    public var id: PersistentIdentifier { persistentModelID }
}

/// Class names by type, for ``PersistentModel/_$entityName``'s default.
final class EntityNameCache: @unchecked Sendable {
    // @unchecked: `names` is only touched under `lock`.
    static let shared = EntityNameCache()
    private let lock = NSLock()
    private var names: [ObjectIdentifier: String] = [:]

    func name(of type: any PersistentModel.Type) -> String {
        let key = ObjectIdentifier(type)
        if let known = lock.withLock({ names[key] }) { return known }
        let name = String(describing: type)
        lock.withLock { names[key] = name }
        return name
    }
}
