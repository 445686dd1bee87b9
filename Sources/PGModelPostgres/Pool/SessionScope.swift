import PostgresNIO

/// The scope a pooled connection is known to be in at session level, for the task holding the lease:
/// the engine skips its per-transaction `set_config` (and a lone read its BEGIN/COMMIT) only when the
/// connection it is given is this one and its scope is the requester's. Package-only: vouching for a
/// connection that is not in the scope would run a user's statements as the login role.
///
/// ```swift
/// try await SessionScope.$current.withValue(SessionScope(scope, of: connection)) { try await body(connection) }
/// ```
package struct SessionScope: Sendable {
    let connection: ObjectIdentifier
    let scope: ConnectionScope

    package init(_ scope: ConnectionScope, of connection: PostgresConnection) {
        self.connection = ObjectIdentifier(connection)
        self.scope = scope
    }

    /// The scope the pool vouches for while it runs a lease's body.
    @TaskLocal package static var current: SessionScope?

    /// Whether `connection` is known to be in `scope` already.
    static func holds(_ scope: ConnectionScope, on connection: PostgresConnection) -> Bool {
        guard let current else { return false }
        return current.connection == ObjectIdentifier(connection) && current.scope == scope
    }
}
