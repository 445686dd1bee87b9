import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModelCore

/// The schema version one connection registered each entity at. After a migration recorded a newer
/// version of an entity, the connection's requests about it are answered `schema_version_mismatch`: a
/// client of the older app gets that error, not rows read or written through tables its models do not
/// describe.
///
/// ```swift
/// versions.record(schema)                                        // after `register`
/// try versions.check(["Trip"], against: registry.recordedVersions)   // before `fetch`
/// ```
final class SessionSchemaVersions: Sendable {
    private let versions = NIOLockedValueBox([String: String]())

    /// Remembers the version `schema`'s entities were registered at.
    func record(_ schema: SchemaDescription) {
        versions.withLockedValue { versions in
            for entity in schema.entities { versions[entity.name] = schema.version }
        }
    }

    /// Throws when a migration moved any of `entities` past the version this connection registered; the
    /// first such entity by name is named.
    func check(_ entities: Set<String>, against recorded: [String: String]) throws {
        let registered = versions.withLockedValue { $0 }
        for name in entities.sorted() { try Self.check(name, registered: registered, recorded: recorded) }
    }

    /// ``check(_:against:)-(Set<String>,_)`` of one entity, the usual case (a fetch), without building a set.
    func check(_ entity: String, against recorded: [String: String]) throws {
        try Self.check(entity, registered: versions.withLockedValue { $0 }, recorded: recorded)
    }

    private static func check(_ name: String, registered: [String: String], recorded: [String: String]) throws {
        guard let mine = registered[name], let current = recorded[name], SchemaVersionOrder.less(mine, current) else { return }
        throw PGModelError(.schemaVersionMismatch,
            "\(name) was migrated to schema version \(current) after this connection registered version \(mine); reconnect with the new version of the app",
            model: name)
    }
}
