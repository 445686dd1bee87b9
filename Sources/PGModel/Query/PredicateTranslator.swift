import Foundation
@_spi(PGModelInternals) import PGModelCore

/// Turns a `#Predicate` and `SortDescriptor`s over one model type into the Query IR that both stores render.
///
/// Translation walks `predicate.expression`, the tree of `PredicateExpressions` values the macro builds.
/// Every construct it cannot express in SQL with the same meaning throws ``PGModelError/Code/unsupportedPredicate``
/// (or ``PGModelError/Code/unsupportedSort``) naming the construct: it never guesses.
///
/// ```swift
/// let translator = PredicateTranslator<Trip>(entity: try #require(schema.entity(for: Trip.self)))
/// let ir = try translator.translate(#Predicate<Trip> { $0.destination == "Paris" })
/// // .compare(.equal, .key("destination"), .value(.string("Paris")))
/// let sort = try translator.translate([SortDescriptor(\Trip.startDate, order: .reverse)])
/// // [SortKey("startDate", ascending: false)]
/// ```
@_spi(PGModelInternals) public struct PredicateTranslator<Root> {
    /// The entity name used in error messages.
    public let entityName: String
    /// The IR key (Swift property name) of a stored attribute of `Root`, or `nil` for anything else.
    let keyPathName: (AnyKeyPath) -> String?
    /// The model class, when `Root` is one: its relationships can then be followed.
    let modelType: (any PersistentModel.Type)?

    /// A translator that names key paths with `keyPathName`; it returns `nil` for key paths that are not
    /// stored attributes (relationships, computed and transient properties), which then throw.
    ///
    /// ```swift
    /// let t = PredicateTranslator<TripRow>(entityName: "Trip", keyPathName: { [\TripRow.name: "name"][$0] })
    /// ```
    public init(entityName: String, keyPathName: @escaping (AnyKeyPath) -> String?) {
        self.entityName = entityName
        self.keyPathName = keyPathName
        self.modelType = nil
    }

    init(entityName: String, modelType: any PersistentModel.Type, keyPathName: @escaping (AnyKeyPath) -> String?) {
        self.entityName = entityName
        self.keyPathName = keyPathName
        self.modelType = modelType
    }

    /// Translates `predicate` to IR.
    ///
    /// ```swift
    /// let ir = try translator.translate(#Predicate<Trip> { $0.name.localizedStandardContains(text) })
    /// // .string(.localizedStandardContains, .key("name"), .value(.string(text)))
    /// ```
    public func translate(_ predicate: Predicate<Root>) throws -> QueryExpression {
        // A single-input predicate's `variable` is a one-element pack, which is the variable itself.
        let variable: PredicateExpressions.Variable<Root> = predicate.variable
        var context = TranslationContext(entityName: entityName, keyPathName: keyPathName,
                                         rootVariables: modelType == nil ? [variable.key] : [])
        if let modelType {
            context.modelVariables[variable.key] = ModelReference(type: modelType, path: [], scope: 0)
        }
        return try context.translate(predicate.expression)
    }
}

extension PredicateTranslator where Root: PersistentModel {
    /// A translator for the stored attributes of `entity`.
    ///
    /// ```swift
    /// let translator = PredicateTranslator<Trip>(entity: try #require(schema.entity(for: Trip.self)))
    /// ```
    public init(entity: Schema.Entity) {
        self.init(entityName: entity.name, modelType: entity.type, keyPathName: { entity.property(for: $0)?.name })
    }
}
