import Foundation
@_spi(PGModelInternals) import PGModelWire

/// Who a connection is logged in as.
///
/// ```swift
/// let alice = SessionUser(id: UUID.v7(), name: "alice", isAdmin: false)
/// ```
@_spi(PGModelInternals) public struct SessionUser: Hashable, Sendable {
    /// The user's id: the `owner_id` of the rows they create.
    public var id: UUID
    /// The user's name.
    public var name: String
    /// Admins see and change every row.
    public var isAdmin: Bool
    /// `pgmodel.users.session_epoch` at login: when it moves on, the session is closed (``SessionRegistry``).
    public var sessionEpoch: Int64

    public init(id: UUID, name: String, isAdmin: Bool = false, sessionEpoch: Int64 = 0) {
        self.id = id
        self.name = name
        self.isAdmin = isAdmin
        self.sessionEpoch = sessionEpoch
    }
}
