// The macros an app writes, as SwiftData spells them. Implementations live in the PGModelMacros plugin.

/// Makes a class a persistent model: PGModel stores its stored properties in a PostgreSQL table,
/// tracks their changes, and makes the class `Observable`.
///
/// Every stored `var` is persisted unless it is `@Transient`, `static`, computed, or its name starts
/// with `_`. Persisted properties need an explicit type: String, Bool, Int, Int8…Int64,
/// UInt8…UInt32, Double, Float, Decimal, Date, UUID, Data, URL, an enum with a String or Int raw value,
/// an array of these (a PostgreSQL array), any other Codable type (a `jsonb` document), another model,
/// an array of models (relationships), or an Optional of one of these. A `@Model` class may subclass
/// another `@Model` class; the hierarchy shares one table.
///
/// ```swift
/// @Model final class Trip {
///     #Unique<Trip>([\.name, \.startDate])
///     @Attribute(.unique) var name: String
///     var startDate: Date
///     var rating: Int? = nil
///     @Transient var isExpanded = false
///
///     init(name: String, startDate: Date) {
///         self.name = name
///         self.startDate = startDate
///     }
/// }
/// ```
///
/// PGModel creates fetched instances without calling your initializer, so properties it does not store
/// need default values.
@attached(
    member,
    conformances: PersistentModel, Observable,
    names: named(_$backingData), named(_$observationRegistrar), named(init(backingData:)), named(_$readStoredValues),
    named(schemaMetadata), named(_$uniquenessConstraints), named(_$globalUniquenessConstraints), named(_$indexes), named(_$superentity),
    arbitrary
)
@attached(memberAttribute)
@attached(extension, conformances: PersistentModel, Observable)
public macro Model() = #externalMacro(module: "PGModelMacros", type: "ModelMacro")

/// Plumbing that `@Model` adds to each persisted property; you do not write it.
///
/// It moves the value into a private `_name` property and routes reads and writes through
/// Observation and the model's change tracking:
///
/// ```swift
/// @Model final class Trip {
///     var name: String   // @Model adds @_PersistedProperty here
/// }
/// ```
///
/// `unassigned: true` is for a property without a default value in a subclass that declares no
/// initializer (seed: `@Model class PersonalTrip: Trip { var reason: Reason }`): it has no value until
/// assigned, so the subclass can inherit its superclass's initializers, as with SwiftData. Saving it
/// unassigned throws `type_mismatch`; reading it unassigned stops with a message naming it.
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_))
public macro _PersistedProperty(unassigned: Bool = false) = #externalMacro(module: "PGModelMacros", type: "PersistedPropertyMacro")

/// Customizes how PGModel stores a property.
///
/// - `options`: `.unique` makes the column a UNIQUE constraint (an insert that collides updates the
///   existing row); `.preserveValueOnDeletion` keeps the value in history tombstones; see
///   ``Schema/Attribute/Option`` for the rest.
/// - `originalName`: the property's previous name, so a migration renames the column instead of
///   dropping it.
/// - `hashModifier`: changes the property's version hash without changing its name.
///
/// ```swift
/// @Model final class Trip {
///     @Attribute(.unique) var name: String
///     @Attribute(.preserveValueOnDeletion, originalName: "start_date") var startDate: Date
///     init(name: String, startDate: Date) { self.name = name; self.startDate = startDate }
/// }
/// ```
@attached(peer)
public macro Attribute(
    _ options: Schema.Attribute.Option...,
    originalName: String? = nil,
    hashModifier: String? = nil
) = #externalMacro(module: "PGModelMacros", type: "AttributeMacro")

/// Keeps a property of a `@Model` class out of the store.
///
/// PGModel creates fetched instances without calling your initializer, so a stored `@Transient`
/// property needs a default value (or an Optional type). Computed properties are never stored and
/// need no `@Transient`.
///
/// ```swift
/// @Model final class Trip {
///     var name: String
///     @Transient var isSelected = false
///     init(name: String) { self.name = name }
/// }
/// ```
@attached(peer)
public macro Transient() = #externalMacro(module: "PGModelMacros", type: "TransientMacro")

/// Declares groups of properties whose values are unique together, enforced by a UNIQUE constraint.
/// Write it inside the body of a `@Model` class; each array is one constraint. Key paths name
/// stored properties of the model directly (`\.name`, not `\.owner.name`).
///
/// ```swift
/// @Model final class Trip {
///     #Unique<Trip>([\.name, \.startDate], [\.destination])
///     var name: String
///     var destination: String
///     var startDate: Date
///     init(name: String, destination: String, startDate: Date) {
///         self.name = name; self.destination = destination; self.startDate = startDate
///     }
/// }
/// ```
///
/// `scope` says whose models the values are compared with: `.owner` (the default, as in SwiftData where
/// each user has a store of their own) or `.allUsers` (every user's: names, handles, slugs), written as
/// a literal. An insert that collides with the user's own model updates it either way; a value another
/// user's model holds makes the save throw `unique_violation`.
///
/// ```swift
/// @Model final class Member {
///     #Unique<Member>([\.handle], [\.firstName, \.lastName], scope: .allUsers)
///     var handle: String
///     var firstName: String
///     var lastName: String
///     init(handle: String, firstName: String, lastName: String) {
///         self.handle = handle; self.firstName = firstName; self.lastName = lastName
///     }
/// }
/// ```
@freestanding(declaration)
public macro Unique<T>(_ constraints: [PartialKeyPath<T>]..., scope: UniquenessScope = .owner) = #externalMacro(module: "PGModelMacros", type: "UniqueMacro")

/// Declares database indexes on a model's properties. Write it inside the body of a `@Model` class;
/// each array is one binary (B-tree) index (several properties make a compound index, in that order).
/// Key paths name stored properties of the model directly; a to-one relationship indexes its foreign key.
///
/// ```swift
/// @Model final class Trip {
///     #Index<Trip>([\.startDate], [\.name, \.startDate])
///     var name: String
///     var startDate: Date
///     init(name: String, startDate: Date) { self.name = name; self.startDate = startDate }
/// }
/// ```
///
/// PostgreSQL names each index after its table and columns (`trip_name_start_date_idx`).
@freestanding(declaration)
public macro Index<T>(_ indices: [PartialKeyPath<T>]...) = #externalMacro(module: "PGModelMacros", type: "IndexMacro")

/// Declares database indexes of a kind on a model's properties. Write it inside the body of a `@Model`
/// class; each argument is one index:
///
/// - `.binary([...])`: a B-tree, as the key-path-array form makes (`trip_name_idx`).
/// - `.rtree([...])`: an R-tree; in PostgreSQL a GiST index (`CREATE INDEX … USING gist`, named
///   `trip_latitude_longitude_gist`), which serves ranges on several properties at once — a box of
///   latitudes and longitudes, a window of dates and prices — whichever of them a predicate restricts.
///   Numeric and `Date` attributes only (the macro explains what to write for any other); it needs the
///   `btree_gist` extension, which PGModel creates when a schema first asks for an rtree index.
///
/// ```swift
/// @Model final class Trip {
///     #Index<Trip>(.binary([\.name]), .rtree([\.latitude, \.longitude]))
///     var name: String
///     var latitude: Double
///     var longitude: Double
///     init(name: String, latitude: Double, longitude: Double) {
///         self.name = name; self.latitude = latitude; self.longitude = longitude
///     }
/// }
/// ```
///
/// Changing an index's kind is a schema change: a migration drops the old index and creates the new one.
@freestanding(declaration)
public macro Index<T>(_ indices: Schema.Index<T>.Types<T>...) = #externalMacro(module: "PGModelMacros", type: "IndexMacro")
    where T: PersistentModel
