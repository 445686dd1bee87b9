@_spi(PGModelInternals) import PGModelCore

/// How a relationship property's Swift value (`Album?`, `Album`, `[Track]`, `[Track]?`) becomes a list
/// of related models and back. The macro-generated code picks it by overload from the property's type,
/// exactly as it picks an ``AttributeCodec`` for attributes.
public struct RelationshipCodec<Value>: @unchecked Sendable {
    // @unchecked: a model metatype (immutable; see `Schema.types`) and a Sendable shape.
    /// The declared destination class (its subclasses are valid members too).
    public let destination: any PersistentModel.Type
    public let isToMany: Bool
    /// `nil` (to-one) or a missing array (to-many) is a valid value.
    public let isOptional: Bool
    /// The value's shape: a generic struct rather than closures, which would capture the destination's
    /// metatype (see `Schema+PropertyAccess.swift`).
    let shape: any RelationshipValueShape<Value>

    /// The related models a value holds.
    func models(_ value: Value) -> [any PersistentModel] { shape.models(value) }
    /// The value holding `models`; nil when they do not fit (a non-optional to-one without a model,
    /// or a model of the wrong class).
    func make(_ models: [any PersistentModel]) -> Value? { shape.make(models) }
}

/// How one kind of relationship value (`M`, `M?`, `[M]`, `[M]?`) holds its related models.
protocol RelationshipValueShape<Value>: Sendable {
    associatedtype Value
    func models(_ value: Value) -> [any PersistentModel]
    func make(_ models: [any PersistentModel]) -> Value?
}

/// `var album: Album` (rare: a non-optional to-one).
struct ToOneShape<M: PersistentModel>: RelationshipValueShape {
    func models(_ value: M) -> [any PersistentModel] { [value] }
    func make(_ models: [any PersistentModel]) -> M? { models.first as? M }
}

/// `var album: Album?`.
struct OptionalToOneShape<M: PersistentModel>: RelationshipValueShape {
    func models(_ value: M?) -> [any PersistentModel] { value.map { [$0] } ?? [] }
    func make(_ models: [any PersistentModel]) -> M?? {
        guard let first = models.first else { return .some(nil) }
        return (first as? M).map { .some($0) }
    }
}

/// `var tracks: [Track]`.
struct ToManyShape<M: PersistentModel>: RelationshipValueShape {
    func models(_ value: [M]) -> [any PersistentModel] { value }
    func make(_ models: [any PersistentModel]) -> [M]? {
        let typed = models.compactMap { $0 as? M }
        return typed.count == models.count ? typed : nil
    }
}

/// `var tracks: [Track]?`.
struct OptionalToManyShape<M: PersistentModel>: RelationshipValueShape {
    func models(_ value: [M]?) -> [any PersistentModel] { value ?? [] }
    func make(_ models: [any PersistentModel]) -> [M]?? {
        let typed = models.compactMap { $0 as? M }
        return typed.count == models.count ? .some(typed) : nil
    }
}

extension _AttributeCodecs {
    public static func codec<M: PersistentModel>(_: M.Type) -> RelationshipCodec<M> {
        RelationshipCodec(destination: M.self, isToMany: false, isOptional: false, shape: ToOneShape<M>())
    }
    public static func codec<M: PersistentModel>(_: M?.Type) -> RelationshipCodec<M?> {
        RelationshipCodec(destination: M.self, isToMany: false, isOptional: true, shape: OptionalToOneShape<M>())
    }
    public static func codec<M: PersistentModel>(_: [M].Type) -> RelationshipCodec<[M]> {
        RelationshipCodec(destination: M.self, isToMany: true, isOptional: false, shape: ToManyShape<M>())
    }
    public static func codec<M: PersistentModel>(_: [M]?.Type) -> RelationshipCodec<[M]?> {
        RelationshipCodec(destination: M.self, isToMany: true, isOptional: true, shape: OptionalToManyShape<M>())
    }
}
