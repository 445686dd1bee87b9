import PGModelCore

/// The entities the server serves, by name: filled by `register` and, lazily, from `pgmodel.entities`
/// so a restarted server serves clients that registered before the restart.
///
/// ```swift
/// let schema = try await registry.schema(covering: ["Trip"]) { try await loadFromDatabase() }
/// ```
actor SchemaRegistry {
    private var schema = SchemaDescription(entities: [])

    /// The registered entities.
    var current: SchemaDescription { schema }

    /// Replaces what is registered, e.g. with the database's view after a registration.
    func replace(with schema: SchemaDescription) {
        self.schema = schema
    }

    /// A schema containing every entity in `names`. Unknown names trigger one reload through `load`
    /// (another server or an earlier run may have registered them); still unknown → `unknown_entity`.
    func schema(
        covering names: Set<String>, load: @Sendable () async throws -> SchemaDescription
    ) async throws -> SchemaDescription {
        if missing(from: schema, names).isEmpty { return schema }
        let loaded = try await load()
        schema = loaded
        if let name = missing(from: loaded, names).sorted().first {
            throw PGModelError(
                .unknownEntity, "entity '\(name)' is not registered; send 'register' with its schema first", model: name)
        }
        return loaded
    }

    private func missing(from schema: SchemaDescription, _ names: Set<String>) -> Set<String> {
        names.subtracting(schema.entities.map(\.name))
    }
}
