import Foundation

/// How much a user a record is shared with may do.
///
/// ```swift
/// try context.share(trip, with: "bob", permission: .readOnly)
/// ```
public enum SharePermission: String, Codable, Sendable, Hashable, CaseIterable {
    /// Read the record and everything it owns through `.cascade` relationships.
    case readOnly
    /// Also update those records and insert and delete children (not the shared record itself).
    case readWrite
}

/// One share of a record with a user, as ``ModelShare`` lists it.
///
/// ```swift
/// let shares: [ModelShare] = try context.shares(of: trip)
/// // [ModelShare(user: "bob", permission: .readOnly, grantedBy: "alice", createdAt: …)]
/// ```
public struct ModelShare: Codable, Sendable, Hashable {
    /// The user the record is shared with.
    public var user: String
    public var permission: SharePermission
    /// The service user (or, for the direct store, the database role) who shared it.
    public var grantedBy: String
    public var createdAt: Date

    public init(user: String, permission: SharePermission, grantedBy: String, createdAt: Date) {
        self.user = user
        self.permission = permission
        self.grantedBy = grantedBy
        self.createdAt = createdAt
    }
}

/// Who owns a record and whom it is shared with, as the caller may see it: the answer of
/// ``ModelStore/sharing(of:)``.
///
/// ```swift
/// let sharing = try await store.sharing(of: RowReference(entity: "Trip", id: tripID))
/// print(sharing.owner ?? "no owner", sharing.shares.map(\.user))
/// ```
public struct RecordSharing: Codable, Sendable, Hashable {
    /// The name of the service user who owns the record; nil for a row without an owner (one the
    /// direct store created).
    public var owner: String?
    /// The shares the caller may see: all of them for the owner or an admin, their own for a grantee.
    public var shares: [ModelShare]

    public init(owner: String?, shares: [ModelShare]) {
        self.owner = owner
        self.shares = shares
    }
}

/// A pending share or revocation of a root record, applied by a save in its transaction.
///
/// ```swift
/// ShareChange(record: RowReference(entity: "Trip", id: tripID), user: "bob", permission: .readWrite)
/// ShareChange(record: RowReference(entity: "Trip", id: tripID), user: "bob", permission: nil)   // unshare
/// ```
@_spi(PGModelInternals) public struct ShareChange: Codable, Sendable, Hashable {
    /// The shared root record.
    public var record: RowReference
    /// The user's name.
    public var user: String
    /// The permission granted, or `nil` to revoke the user's share.
    public var permission: SharePermission?

    public init(record: RowReference, user: String, permission: SharePermission?) {
        self.record = record
        self.user = user
        self.permission = permission
    }

    private enum CodingKeys: String, CodingKey { case entity, id, user, permission }

    /// The flat form the protocol uses: `{"entity":"Trip","id":"…","user":"bob","permission":"readOnly"}`,
    /// `"permission":null` (or no permission) to revoke.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        record = RowReference(entity: try c.decode(String.self, forKey: .entity), id: try c.decode(UUID.self, forKey: .id))
        user = try c.decode(String.self, forKey: .user)
        permission = try c.decodeIfPresent(SharePermission.self, forKey: .permission)
        guard (1...128).contains(user.count) else {
            throw DecodingError.dataCorruptedError(forKey: .user, in: c, debugDescription: "a user name is 1 to 128 characters")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(record.entity, forKey: .entity)
        try c.encode(record.id, forKey: .id)
        try c.encode(user, forKey: .user)
        try c.encode(permission, forKey: .permission)
    }
}
