import Foundation
@_spi(PGModelInternals) import PGModelCore

// How a property's metadata reaches the property on a model. These are generic structs behind
// existentials, not `@Sendable` closures: a closure using `Model` would capture its metatype, which is not
// Sendable for a `@MainActor` model (its conformance to `PersistentModel` is isolated), and Swift 6 warns
// about each such capture in every build of PGModel. A struct carries `Model` in its type instead; it
// only casts and follows key paths, and models are only touched on their context's isolation.

/// Reads and writes one stored property of a model.
protocol PropertyAccess: Sendable {
    /// The stored form of the property's value on `model`, or nil when `model` is of another class (or,
    /// for a to-many relationship, always).
    func read(_ model: any PersistentModel) -> PGValue?
    /// Sets the property on `model` from its stored form.
    func write(_ model: any PersistentModel, _ stored: PGValue) throws
}

/// An attribute converted by its ``AttributeCodec``.
struct AttributeAccess<Model: PersistentModel, Value>: PropertyAccess, @unchecked Sendable {
    // @unchecked: an immutable key path and a Sendable codec.
    let name: String
    let keypath: ReferenceWritableKeyPath<Model, Value>
    let codec: AttributeCodec<Value>

    func read(_ model: any PersistentModel) -> PGValue? {
        guard let model = model as? Model else { return nil }
        return codec.encode(model[keyPath: keypath])
    }

    func write(_ model: any PersistentModel, _ stored: PGValue) throws {
        guard let model = model as? Model else {
            throw PGModelError(.internalError, "property '\(name)' of \(Model.self) written on a \(type(of: model))")
        }
        model[keyPath: keypath] = try codec.decode(stored)
    }
}

/// An attribute stored as the `Data` of its `@Attribute(.transformable(by:))` transformer.
struct TransformedAttributeAccess<Model: PersistentModel, Value>: PropertyAccess, @unchecked Sendable {
    // @unchecked: an immutable key path and a class metatype.
    let name: String
    let keypath: ReferenceWritableKeyPath<Model, Value>
    let transformer: ValueTransformer.Type

    func read(_ model: any PersistentModel) -> PGValue? {
        guard let model = model as? Model else { return nil }
        return (transformer.init().transformedValue(model[keyPath: keypath]) as? Data).map(PGValue.data) ?? .null
    }

    func write(_ model: any PersistentModel, _ stored: PGValue) throws {
        guard let model = model as? Model else {
            throw PGModelError(.internalError, "property '\(name)' of \(Model.self) written on a \(type(of: model))")
        }
        model[keyPath: keypath] = try Schema.PropertyMetadata.reverse(stored, with: transformer, as: Value.self, name: name)
    }
}

/// Follows a relationship property on a model.
protocol RelationshipPropertyAccess: PropertyAccess {
    /// The related models (reads through the property: resolves a fault).
    func models(_ model: any PersistentModel) -> [any PersistentModel]
    /// The related models in a value of the property's type.
    func modelsOfValue(_ value: Any) -> [any PersistentModel]?
    /// Sets the property to hold exactly `related`.
    func assign(_ model: any PersistentModel, _ related: [any PersistentModel]) throws
}

/// A relationship converted by its ``RelationshipCodec``. As a ``PropertyAccess`` it reads a to-one's
/// foreign key (the related model's id, `.null` for none); relationships are never written from a
/// stored value.
struct RelationshipAccess<Model: PersistentModel, Value>: RelationshipPropertyAccess, @unchecked Sendable {
    // @unchecked: an immutable key path and a Sendable codec.
    let name: String
    let keypath: ReferenceWritableKeyPath<Model, Value>
    let codec: RelationshipCodec<Value>

    func models(_ model: any PersistentModel) -> [any PersistentModel] {
        guard let model = model as? Model else { return [] }
        return codec.models(model[keyPath: keypath])
    }

    func modelsOfValue(_ value: Any) -> [any PersistentModel]? {
        guard let value = value as? Value else { return nil }
        return codec.models(value)
    }

    func assign(_ model: any PersistentModel, _ related: [any PersistentModel]) throws {
        guard let model = model as? Model else {
            throw PGModelError(.internalError, "relationship '\(name)' of \(Model.self) written on a \(type(of: model))")
        }
        guard let value = codec.make(related) else {
            throw PGModelError(.typeMismatch, "relationship '\(name)' of \(Model.self) cannot hold \(related.map { "\(type(of: $0))" })",
                               model: "\(Model.self)", keyPath: name)
        }
        model[keyPath: keypath] = value
    }

    func read(_ model: any PersistentModel) -> PGValue? {
        guard !codec.isToMany, let model = model as? Model else { return nil }
        return codec.models(model[keyPath: keypath]).first.map { .uuid($0._$backingData.id) } ?? .null
    }

    func write(_ model: any PersistentModel, _ stored: PGValue) throws {
        throw PGModelError(.internalError, "relationship '\(name)' of \(Model.self) is not written from a stored value")
    }
}
