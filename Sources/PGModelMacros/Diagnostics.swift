import SwiftDiagnostics
import SwiftSyntax

/// Every message the PGModel macros emit. Messages are full sentences that name the property and the
/// class, because they surface in the user's code far from the macro that produced them.
struct ModelDiagnostic: DiagnosticMessage {
    let id: String
    let message: String
    let severity: DiagnosticSeverity

    init(_ id: String, _ message: String, severity: DiagnosticSeverity = .error) {
        self.id = id
        self.message = message
        self.severity = severity
    }

    var diagnosticID: MessageID { MessageID(domain: "PGModelMacros", id: id) }

    /// The types an attribute may have, spelled out in every unsupported-type message.
    static let supportedTypes =
        "Supported types are String, Bool, Int, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, "
        + "Double, Float, Decimal, Date, UUID, Data, URL, enums with String or Int raw values, "
        + "Optional of each, other @Model classes (a to-one relationship), and arrays of them (a to-many relationship)."

    // MARK: @Model itself

    static func notAClass(_ kind: String) -> Self {
        Self("notAClass", "@Model can only be applied to a class; SwiftData models are reference types, and this is \(article(kind)) \(kind).")
    }

    // MARK: Stored properties

    static func missingType(_ property: String, of model: String, example: String) -> Self {
        Self("missingType", "Property '\(property)' of @Model class '\(model)' needs an explicit type, e.g. `\(example)`.")
    }

    static func letProperty(_ property: String, of model: String) -> Self {
        Self("letProperty", "Property '\(property)' of @Model class '\(model)' is a `let`; PGModel sets stored properties when it fetches or rolls back a model, so declare it with `var`.")
    }

    static func observers(_ property: String, of model: String) -> Self {
        Self("observers", "Property '\(property)' of @Model class '\(model)' has willSet/didSet observers, which PGModel's generated accessors replace; observe the model with Observation (withObservationTracking) instead.")
    }

    static func lazyProperty(_ property: String, of model: String) -> Self {
        Self("lazyProperty", "Property '\(property)' of @Model class '\(model)' is `lazy`; PGModel loads stored properties from the store, so remove `lazy`, or mark the property @Transient if it should not be stored.")
    }

    static func transientWithoutDefault(_ property: String) -> Self {
        Self("transientWithoutDefault", "PGModel creates fetched instances without calling your initializer, so @Transient property '\(property)' needs a default value.")
    }

    static func underscoredWithoutDefault(_ property: String) -> Self {
        Self("underscoredWithoutDefault", "PGModel does not store property '\(property)' because its name starts with '_', and it creates fetched instances without calling your initializer, so '\(property)' needs a default value.")
    }

    static func multipleBindings(_ names: [String], of model: String) -> Self {
        let list = names.isEmpty ? "" : " (" + names.map { "'\($0)'" }.joined(separator: ", ") + ")"
        return Self("multipleBindings", "@Model class '\(model)' declares several stored properties\(list) in one declaration; declare each with its own `var` so PGModel can generate its accessors.")
    }

    static func unsupportedType(_ property: String, of model: String, type: String, reason: String) -> Self {
        Self("unsupportedType", "Property '\(property)' of @Model class '\(model)' has type '\(type)', which PGModel cannot store: \(reason). \(supportedTypes)")
    }

    static func referenceModifier(_ property: String, of model: String, modifier: String) -> Self {
        Self("referenceModifier", "Property '\(property)' of @Model class '\(model)' is a `\(modifier)` reference; PGModel keeps related models alive through their context and keeps inverses in step itself, so declare the relationship as a plain `var` (an Optional for to-one, an array for to-many).")
    }

    // MARK: Relationships

    static func attributeAndRelationship(_ property: String, of model: String) -> Self {
        Self("attributeAndRelationship", "Property '\(property)' of @Model class '\(model)' has both @Attribute and @Relationship; a property is either an attribute or a relationship to other models, so keep only the one that describes it.")
    }

    static func letRelationship(_ property: String, of model: String) -> Self {
        Self("letRelationship", "Relationship '\(property)' of @Model class '\(model)' is a `let`; PGModel sets relationships when it fetches a model and when it keeps an inverse relationship in step, so declare it with `var`.")
    }

    static func transientRelationship(_ property: String, of model: String) -> Self {
        Self("transientRelationship", "Property '\(property)' of @Model class '\(model)' has both @Transient and @Relationship; a @Transient property is not stored, so it cannot be a relationship. Remove one of them.")
    }

    // MARK: @ModelActor

    static func notAnActor(_ kind: String) -> Self {
        Self("notAnActor", "@ModelActor can only be applied to an actor, which serializes access to its model context; this is \(article(kind)) \(kind).")
    }

    // MARK: #Unique and #Index

    static func constraintArgument(_ macro: String, model: String) -> Self {
        if macro == "Index" {
            return Self("constraintArgument", "#Index takes array literals of key paths, e.g. `#Index<\(model)>([\\.name], [\\.name, \\.startDate])`, or index kinds, e.g. `#Index<\(model)>(.binary([\\.name]), .rtree([\\.latitude, \\.longitude]))`.")
        }
        return Self("constraintArgument", "#\(macro) takes array literals of key paths, e.g. `#\(macro)<\(model)>([\\.name], [\\.name, \\.startDate])`.")
    }

    static func uniqueScope(model: String) -> Self {
        Self("uniqueScope", "#Unique's scope is read from the source, so write it as `.owner` or `.allUsers`, e.g. `#Unique<\(model)>([\\.handle], scope: .allUsers)`.")
    }

    static func rtreeUnsupported(property: String, model: String, what: String) -> Self {
        Self("rtreeUnsupported", "#Index .rtree cannot cover '\(property)' of '\(model)', which is \(what): an R-tree index (a PostgreSQL GiST index) covers numeric and Date properties only. Index it with .binary([\\.\(property)]) instead.")
    }

    static func constraintEmptyGroup(_ macro: String) -> Self {
        Self("constraintEmptyGroup", "An empty group in #\(macro) constrains nothing; list at least one key path in each group.")
    }

    static func constraintKeyPath(_ macro: String, keyPath: String, model: String) -> Self {
        Self("constraintKeyPath", "#\(macro) key path '\(keyPath)' must name one stored property of '\(model)' directly, like `\\.name`; key paths through other values are not supported.")
    }

    static func constraintNotPersisted(_ macro: String, property: String, model: String) -> Self {
        Self("constraintNotPersisted", "#\(macro) names '\(property)', which is not a stored property that PGModel persists for '\(model)'; list only stored properties that are not @Transient.")
    }

    static func constraintOutsideModel(_ macro: String) -> Self {
        Self("constraintOutsideModel", "#\(macro) can only be written inside the body of a @Model class.")
    }

    private static func article(_ word: String) -> String {
        word.first.map { "aeiou".contains($0) } == true ? "an" : "a"
    }
}

/// The label of a fix-it the macros offer.
struct ModelFixIt: FixItMessage {
    let message: String
    var fixItID: MessageID { MessageID(domain: "PGModelMacros", id: message) }

    init(_ message: String) { self.message = message }
}
