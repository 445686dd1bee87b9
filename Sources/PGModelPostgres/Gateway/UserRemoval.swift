import Foundation

/// What becomes of a removed user's rows (``PostgresStoreEngine/removeUser(_:_:progress:on:)``).
///
/// ```swift
/// let report = try await engine.removeUser("alice", .handOver(to: "bob"), on: connection)
/// ```
@_spi(PGModelInternals) public enum UserRemoval: Sendable, Hashable {
    /// Delete every row the user owns, in every registered entity table; their shares go with them.
    case deleteRows
    /// Give every row the user owns to this user, with the shares the removed user granted on them.
    case handOver(to: String)
}
