import Foundation
@_spi(PGModelInternals) import PGModelCore

/// One change of a history transaction: an insert, an update or a delete.
///
/// ```swift
/// switch change {
/// case .insert(let insert as DefaultHistoryInsert<Trip>): print("new trip", insert.changedPersistentIdentifier)
/// case .update(let update as DefaultHistoryUpdate<Trip>): print(update.updatedAttributes)
/// case .delete(let delete as DefaultHistoryDelete<Trip>): print(delete.tombstone[\.name] ?? "?")
/// default: break
/// }
/// ```
public enum HistoryChange: Hashable, Sendable {
    case insert(any HistoryInsert)
    case update(any HistoryUpdate)
    case delete(any HistoryDelete)

    /// The changed model's identifier.
    public var changedPersistentIdentifier: PersistentIdentifier {
        switch self {
        case .insert(let change): change.changedPersistentIdentifier
        case .update(let change): change.changedPersistentIdentifier
        case .delete(let change): change.changedPersistentIdentifier
        }
    }

    /// `pgmodel.change_rows.id` of this change.
    var changeIdentifier: Int64 {
        switch self {
        case .insert(let change): (change as? any PGModelHistoryChange)?.record.changeIdentifier ?? 0
        case .update(let change): (change as? any PGModelHistoryChange)?.record.changeIdentifier ?? 0
        case .delete(let change): (change as? any PGModelHistoryChange)?.record.changeIdentifier ?? 0
        }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.changeIdentifier == rhs.changeIdentifier && lhs.changedPersistentIdentifier == rhs.changedPersistentIdentifier
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(changeIdentifier)
        hasher.combine(changedPersistentIdentifier)
    }

    /// `nil` for a class this container's schema does not contain (another app sharing the store):
    /// such a change has no model type to be typed with.
    init?(record: HistoryChangeRecord, transaction: Int64, storeIdentifier: String, schema: Schema) {
        guard let entity = schema.entity(named: record.entity) else { return nil }
        // The store's name as models of that store carry it, so a changed identifier and a fetched
        // model's `persistentModelID` say the same.
        let changed = PersistentIdentifier(entityName: record.entity, id: record.id,
                                           storeIdentifier: storeIdentifier, isTemporary: false)
        self = Self.make(entity.type, record: record, transaction: transaction, changed: changed, entity: entity)
    }

    private static func make<M: PersistentModel>(_: M.Type, record: HistoryChangeRecord, transaction: Int64,
                                                 changed: PersistentIdentifier, entity: Schema.Entity?) -> HistoryChange {
        switch record.kind {
        case .insert: .insert(DefaultHistoryInsert<M>(record: record, transactionIdentifier: transaction, changed: changed))
        case .update: .update(DefaultHistoryUpdate<M>(record: record, transactionIdentifier: transaction, changed: changed, entity: entity))
        case .delete: .delete(DefaultHistoryDelete<M>(record: record, transactionIdentifier: transaction, changed: changed, entity: entity))
        }
    }
}

/// The stored record behind a default change.
protocol PGModelHistoryChange {
    var record: HistoryChangeRecord { get }
}

/// An inserted model.
///
/// ```swift
/// if case .insert(let insert) = change { print(insert.changedPersistentIdentifier) }
/// ```
public protocol HistoryInsert<Model>: Sendable {
    associatedtype Model: PersistentModel
    associatedtype ChangeIdentifier: Comparable, Hashable, Sendable
    associatedtype TransactionIdentifier: Comparable, Hashable, Sendable
    var changeIdentifier: ChangeIdentifier { get }
    var changedPersistentIdentifier: PersistentIdentifier { get }
    var transactionIdentifier: TransactionIdentifier { get }
}

/// An updated model and the attributes the save changed.
///
/// ```swift
/// if case .update(let update as DefaultHistoryUpdate<Trip>) = change { print(update.updatedAttributes.count) }
/// ```
public protocol HistoryUpdate<Model>: Sendable {
    associatedtype Model: PersistentModel
    associatedtype ChangeIdentifier: Comparable, Hashable, Sendable
    associatedtype TransactionIdentifier: Comparable, Hashable, Sendable
    var changeIdentifier: ChangeIdentifier { get }
    var changedPersistentIdentifier: PersistentIdentifier { get }
    var transactionIdentifier: TransactionIdentifier { get }
    var updatedAttributes: [PartialKeyPath<Model>] { get }
}

/// A deleted model and its tombstone.
///
/// ```swift
/// if case .delete(let delete as DefaultHistoryDelete<Trip>) = change { print(delete.tombstone[\.name] ?? "?") }
/// ```
public protocol HistoryDelete<Model>: Sendable {
    associatedtype Model: PersistentModel
    associatedtype ChangeIdentifier: Comparable, Hashable, Sendable
    associatedtype TransactionIdentifier: Comparable, Hashable, Sendable
    var changeIdentifier: ChangeIdentifier { get }
    var changedPersistentIdentifier: PersistentIdentifier { get }
    var transactionIdentifier: TransactionIdentifier { get }
    var tombstone: HistoryTombstone<Model> { get }
}

/// PGModel's insert change.
///
/// ```swift
/// if case .insert(let insert as DefaultHistoryInsert<Trip>) = change { print(insert.changeIdentifier) }
/// ```
public struct DefaultHistoryInsert<Model: PersistentModel>: HistoryInsert, PGModelHistoryChange {
    let record: HistoryChangeRecord
    public let transactionIdentifier: Int64
    public var changeIdentifier: Int64 { record.changeIdentifier }
    public let changedPersistentIdentifier: PersistentIdentifier

    init(record: HistoryChangeRecord, transactionIdentifier: Int64, changed: PersistentIdentifier) {
        self.record = record
        self.transactionIdentifier = transactionIdentifier
        self.changedPersistentIdentifier = changed
    }
}

/// PGModel's update change. Beyond SwiftData it also carries the new values of the updated attributes.
///
/// ```swift
/// if case .update(let update as DefaultHistoryUpdate<Trip>) = change {
///     let newName: String? = update.newValue(\.name)
/// }
/// ```
public struct DefaultHistoryUpdate<Model: PersistentModel>: HistoryUpdate, PGModelHistoryChange, @unchecked Sendable {
    // @unchecked: the key paths are immutable and only ever read.
    let record: HistoryChangeRecord
    private let entity: Schema.Entity?
    public let transactionIdentifier: Int64
    public var changeIdentifier: Int64 { record.changeIdentifier }
    public let changedPersistentIdentifier: PersistentIdentifier
    /// Key paths of the attributes and to-one relationships the save changed.
    public let updatedAttributes: [PartialKeyPath<Model>]
    /// Swift names of the changed properties, including any this model type cannot name by key path.
    public var updatedAttributeNames: [String] { record.updatedAttributes }

    init(record: HistoryChangeRecord, transactionIdentifier: Int64, changed: PersistentIdentifier, entity: Schema.Entity?) {
        self.record = record
        self.entity = entity
        self.transactionIdentifier = transactionIdentifier
        self.changedPersistentIdentifier = changed
        updatedAttributes = record.updatedAttributes.compactMap { entity?.property(named: $0)?.keypath as? PartialKeyPath<Model> }
    }

    /// The value the save gave `keyPath` (nil when it was not updated or cannot be read back).
    public func newValue<Value>(_ keyPath: KeyPath<Model, Value>) -> Value? {
        guard let property = entity?.property(for: keyPath), let stored = record.values[property.name] else { return nil }
        return (try? property.decodeStored(stored)) as? Value
    }
}

/// PGModel's delete change.
///
/// ```swift
/// if case .delete(let delete as DefaultHistoryDelete<Trip>) = change { print(delete.tombstone[\.name] ?? "?") }
/// ```
public struct DefaultHistoryDelete<Model: PersistentModel>: HistoryDelete, PGModelHistoryChange {
    let record: HistoryChangeRecord
    public let transactionIdentifier: Int64
    public var changeIdentifier: Int64 { record.changeIdentifier }
    public let changedPersistentIdentifier: PersistentIdentifier
    public let tombstone: HistoryTombstone<Model>

    init(record: HistoryChangeRecord, transactionIdentifier: Int64, changed: PersistentIdentifier, entity: Schema.Entity?) {
        self.record = record
        self.transactionIdentifier = transactionIdentifier
        self.changedPersistentIdentifier = changed
        self.tombstone = HistoryTombstone(values: record.tombstone, entity: entity)
    }
}

/// The `.preserveValueOnDeletion` attributes of a deleted model, as they were when it was deleted.
///
/// ```swift
/// let name = delete.tombstone[\.name] as? String
/// ```
public struct HistoryTombstone<Model: PersistentModel>: Sequence, @unchecked Sendable {
    // @unchecked: holds only stored values and immutable schema metadata.
    private let values: [String: PGValue]
    private let entity: Schema.Entity?

    init(values: [String: PGValue], entity: Schema.Entity?) {
        self.values = values
        self.entity = entity
    }

    /// The preserved value of `keyPath`, or nil when it was not preserved.
    public subscript(keyPath: PartialKeyPath<Model>) -> (any Sendable)? {
        guard let property = entity?.property(for: keyPath), let stored = values[property.name] else { return nil }
        return Self.sendable(try? property.decodeStored(stored))
    }

    /// Each preserved attribute's key path and value.
    public func makeIterator() -> IndexingIterator<[(PartialKeyPath<Model>, any Sendable)]> {
        let pairs: [(PartialKeyPath<Model>, any Sendable)] = values.keys.sorted().compactMap { name in
            guard let property = entity?.property(named: name), let keyPath = property.keypath as? PartialKeyPath<Model>,
                  let stored = values[name], let value = Self.sendable(try? property.decodeStored(stored)) else { return nil }
            return (keyPath, value)
        }
        return pairs.makeIterator()
    }

    /// Stored attribute values are value types (PersistableAttribute, Codable) decoded afresh for the
    /// caller, so handing them out as Sendable is safe; the compiler cannot see that through `Any`.
    private static func sendable(_ value: Any?) -> (any Sendable)? {
        guard let value else { return nil }
        return cast(value, to: (any Sendable).self)
    }

    /// A cast the compiler cannot check statically (marker protocols may not appear in `as?` directly).
    private static func cast<T>(_ value: Any, to: T.Type) -> T? { value as? T }
}

