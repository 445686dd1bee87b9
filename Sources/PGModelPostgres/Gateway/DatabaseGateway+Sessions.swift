import Foundation
@_spi(PGModelInternals) import PGModelCore

/// The server's bookkeeping of live sessions (`sql/014_pgmodel_sessions.sql`). It runs on the login
/// connections, like the logins it follows, so it never waits behind data requests, nor they behind it.
extension DatabaseGateway {
    /// The current `session_epoch` of each of `ids` still a user (``PostgresStoreEngine/sessionEpochs(of:on:)``).
    ///
    /// ```swift
    /// let epochs = try await gateway.sessionEpochs(of: [alice.id])
    /// ```
    package func sessionEpochs(of ids: [UUID]) async throws -> [UUID: Int64] {
        try await (loginPool ?? pool).withConnection(scope: .trusted, deadline: requestTimeout, operation: "re-reading users") {
            try await self.engine.sessionEpochs(of: ids, on: $0)
        }
    }

    /// Records logged-in sessions in `pgmodel.sessions`.
    package func recordSessions(_ sessions: [RecordedSession], instance: UUID) async throws {
        try await (loginPool ?? pool).withConnection(scope: .trusted, deadline: requestTimeout, operation: "recording sessions") {
            try await self.engine.recordSessions(sessions, instance: instance, on: $0)
        }
    }

    /// Forgets ended sessions.
    package func forgetSessions(_ ids: [UUID]) async throws {
        try await (loginPool ?? pool).withConnection(scope: .trusted, deadline: requestTimeout, operation: "forgetting sessions") {
            try await self.engine.forgetSessions(ids, on: $0)
        }
    }

    /// Deletes the rows of instances whose doorbell backend is gone.
    package func purgeDeadInstances() async throws {
        try await (loginPool ?? pool).withConnection(scope: .trusted, deadline: requestTimeout, operation: "purging dead instances") {
            try await self.engine.purgeDeadInstances(on: $0)
        }
    }

    /// Deletes an instance's row and its sessions'.
    package func removeInstance(id: UUID) async throws {
        try await (loginPool ?? pool).withConnection(scope: .trusted, deadline: requestTimeout, operation: "removing the instance") {
            try await self.engine.removeInstance(id: id, on: $0)
        }
    }
}
