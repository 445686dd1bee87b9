import Foundation

/// What ``ModelContext/model(for:)`` returns when it cannot make even a fault of the identifier's class
/// (the class is not in the container's schema): a model of no class the app knows, so `as? Trip` is
/// nil, with ``ModelContext/lastFaultError`` saying why. SwiftData would crash here.
///
/// ```swift
/// let model = context.model(for: idOfAnotherApp)   // UnavailableModel; context.lastFaultError: unknown_entity
/// ```
final class UnavailableModel: PersistentModel {
    let _$backingData: ModelBackingData

    init(backingData: ModelBackingData) throws {
        _$backingData = backingData
    }

    init(id: UUID) {
        _$backingData = ModelBackingData(row: StoreRow(entity: "UnavailableModel", id: id, values: StoredValues(), via: nil))
    }

    static var schemaMetadata: [Schema.PropertyMetadata] { [] }
}
