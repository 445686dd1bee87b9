import PGModelCore

/// How a relationship property's Swift value (`Album?`, `Album`, `[Track]`, `[Track]?`) becomes a list
/// of related models and back. The macro-generated code picks it by overload from the property's type,
/// exactly as it picks an ``AttributeCodec`` for attributes.
public struct RelationshipCodec<Value>: @unchecked Sendable {
    // @unchecked: metatypes and @Sendable closures only.
    /// The declared destination class (its subclasses are valid members too).
    public let destination: any PersistentModel.Type
    public let isToMany: Bool
    /// `nil` (to-one) or a missing array (to-many) is a valid value.
    public let isOptional: Bool
    let models: @Sendable (Value) -> [any PersistentModel]
    /// The value holding `models`; nil when they do not fit (a non-optional to-one without a model,
    /// or a model of the wrong class).
    let make: @Sendable ([any PersistentModel]) -> Value?
}

extension _AttributeCodecs {
    public static func codec<M: PersistentModel>(_: M.Type) -> RelationshipCodec<M> {
        RelationshipCodec(destination: M.self, isToMany: false, isOptional: false,
                          models: { [$0] }, make: { $0.first as? M })
    }
    public static func codec<M: PersistentModel>(_: M?.Type) -> RelationshipCodec<M?> {
        RelationshipCodec(destination: M.self, isToMany: false, isOptional: true,
                          models: { $0.map { [$0] } ?? [] },
                          make: { models in
                              guard let first = models.first else { return .some(nil) }
                              return (first as? M).map { .some($0) }
                          })
    }
    public static func codec<M: PersistentModel>(_: [M].Type) -> RelationshipCodec<[M]> {
        RelationshipCodec(destination: M.self, isToMany: true, isOptional: false,
                          models: { $0 }, make: { models in
                              let typed = models.compactMap { $0 as? M }
                              return typed.count == models.count ? typed : nil
                          })
    }
    public static func codec<M: PersistentModel>(_: [M]?.Type) -> RelationshipCodec<[M]?> {
        RelationshipCodec(destination: M.self, isToMany: true, isOptional: true,
                          models: { $0 ?? [] }, make: { models in
                              let typed = models.compactMap { $0 as? M }
                              return typed.count == models.count ? .some(typed) : nil
                          })
    }
}
