import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO

/// The entities a ``DatabaseGateway`` serves, by name: the database's own view (`pgmodel.entities`),
/// refreshed after every registration and, lazily, when a request names an entity it does not know yet
/// (another process or an earlier run may have registered it).
///
/// A lock, not an actor: the direct store's calls run on an event loop and must not hop to the
/// cooperative pool that blocked synchronous callers may be occupying.
///
/// ```swift
/// let schema = try await registry.schema(covering: ["Trip"]) { try await loadFromDatabase() }
/// ```
package final class SchemaRegistry: Sendable {
    /// The registered entities, and the select templates rendered against exactly them: replaced together,
    /// so no template outlives the schema it was rendered for.
    private let schema = NIOLockedValueBox((SchemaDescription(entities: []), SelectTemplateCache()))

    package init() {}

    /// The registered entities.
    package var current: SchemaDescription { schema.withLockedValue { $0.0 } }

    /// Replaces what is registered, e.g. with the database's view after a registration.
    private let versions = NIOLockedValueBox([String: String]())

    /// The newest version a migration recorded for each entity (entities never migrated are absent).
    package var recordedVersions: [String: String] { versions.withLockedValue { $0 } }

    /// Replaces the recorded versions (loaded with the registered schema).
    package func replace(versions: [String: String]) {
        self.versions.withLockedValue { $0 = versions }
    }

    package func replace(with schema: SchemaDescription) {
        self.schema.withLockedValue { $0 = (schema, SelectTemplateCache()) }
    }

    /// A schema containing every entity in `names`. Unknown names trigger one reload through `load`;
    /// still unknown → `unknown_entity`.
    package func schema(
        covering names: Set<String>, load: @Sendable () async throws -> SchemaDescription
    ) async throws -> SchemaDescription {
        try await schemaAndTemplates(covering: names, load: load).schema
    }

    /// ``schema(covering:load:)`` with the select templates that belong to that schema.
    package func schemaAndTemplates(
        covering names: Set<String>, load: @Sendable () async throws -> SchemaDescription
    ) async throws -> (schema: SchemaDescription, templates: SelectTemplateCache) {
        let known = schema.withLockedValue { $0 }
        if Self.missing(from: known.0, names).isEmpty { return known }
        let loaded = try await load()
        let templates = SelectTemplateCache()
        schema.withLockedValue { $0 = (loaded, templates) }
        if let name = Self.missing(from: loaded, names).sorted().first {
            throw PGModelError(
                .unknownEntity, "entity '\(name)' is not registered; send 'register' with its schema first", model: name)
        }
        return (loaded, templates)
    }

    private static func missing(from schema: SchemaDescription, _ names: Set<String>) -> Set<String> {
        // Every fetch asks: look each name up instead of building a set of all the schema's names.
        names.filter { schema.entity(named: $0) == nil }
    }
}
