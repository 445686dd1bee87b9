// The macros for model graphs — relationships between models, and actors that work on them — as
// SwiftData spells them. Implementations live in the PGModelMacros plugin.

/// Describes a relationship between models: how deletes propagate, its inverse, and how many related
/// models it may hold.
///
/// A property whose type is another `@Model` class (`Album?`) or an array of them (`[Track]`) is a
/// relationship with or without this attribute; add it to choose options other than the defaults.
///
/// - `deleteRule`: what deleting this model does to the related ones (`.nullify` by default,
///   `.cascade` deletes them too, `.deny` refuses while any exist).
/// - `inverse`: the property on the related model that points back, kept in step automatically.
/// - `minimumModelCount` / `maximumModelCount`: bounds for a to-many relationship (0: no bound).
/// - `originalName`: the previous name, so a migration renames instead of dropping.
/// - `hashModifier`: changes the property's version hash without changing its name.
///
/// ```swift
/// @Model final class Album {
///     var title: String
///     @Relationship(deleteRule: .cascade, inverse: \Track.album) var tracks: [Track] = []
///     init(title: String) { self.title = title }
/// }
///
/// @Model final class Track {
///     var title: String
///     var album: Album?
///     init(title: String) { self.title = title }
/// }
/// ```
@attached(peer)
public macro Relationship(
    _ options: Schema.Relationship.Option...,
    deleteRule: Schema.Relationship.DeleteRule = .nullify,
    minimumModelCount: Int? = 0,
    maximumModelCount: Int? = 0,
    originalName: String? = nil,
    inverse: AnyKeyPath? = nil,
    hashModifier: String? = nil
) = #externalMacro(module: "PGModelMacros", type: "RelationshipMacro")

/// Makes an actor own a `ModelContext` for its container, run on the actor's own serial executor, so
/// background work on models is isolated to the actor.
///
/// It adds `modelContainer`, `modelExecutor` (whose `modelContext` the actor uses) and
/// `init(modelContainer:)`, and conforms the actor to ``ModelActor``.
///
/// ```swift
/// @ModelActor actor Importer {
///     func importTrips(named names: [String]) throws {
///         for name in names { modelContext.insert(Trip(name: name)) }
///         try modelContext.save()
///     }
/// }
///
/// let importer = Importer(modelContainer: container)
/// try await importer.importTrips(named: ["Lisbon", "Porto"])
/// ```
@attached(member, names: named(modelExecutor), named(modelContainer), named(init))
@attached(extension, conformances: ModelActor)
public macro ModelActor() = #externalMacro(module: "PGModelMacros", type: "ModelActorMacro")
