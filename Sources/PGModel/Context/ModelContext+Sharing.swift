import Foundation
@_spi(PGModelInternals) import PGModelCore

extension ModelContext {
    /// Shares `model` with the service user named `user`: they see it and every model it owns through
    /// `.cascade` relationships (children added later included); with ``SharePermission/readWrite`` they
    /// may also change those models and insert and delete children. Sharing again with another
    /// permission changes it.
    ///
    /// Pending: the next ``save()`` applies it in its transaction. That save fails with `not_found` when
    /// the user does not exist and with `forbidden` when this user does not own `model` (admins and the
    /// direct store may share any record); either way nothing of it is written. ``rollback()`` discards
    /// pending shares.
    ///
    /// ```swift
    /// try context.share(trip, with: "bob", permission: .readOnly)
    /// try context.save()
    /// ```
    public func share<T: PersistentModel>(_ model: T, with user: String, permission: SharePermission) throws {
        try addShareChange(model, user: user, permission: permission)
    }

    /// Revokes `user`'s share of `model` at the next ``save()``; revoking a share that does not exist
    /// does nothing.
    ///
    /// ```swift
    /// try context.unshare(trip, with: "bob")
    /// try context.save()
    /// ```
    public func unshare<T: PersistentModel>(_ model: T, with user: String) throws {
        try addShareChange(model, user: user, permission: nil)
    }

    /// The shares of `model` this user may see, read from the store now: every share for the model's
    /// owner or an admin, their own share for a user it is shared with.
    ///
    /// ```swift
    /// let shares: [ModelShare] = try context.shares(of: trip)
    /// ```
    public func shares<T: PersistentModel>(of model: T) throws -> [ModelShare] {
        let record = try shareableRecord(model)
        let store = container.store
        return try roundTrip { try await store.shares(of: record) }
    }

    /// ``shares(of:)``, suspending instead of blocking.
    ///
    /// ```swift
    /// let shares = try await context.sharesAsync(of: trip)
    /// ```
    public nonisolated(nonsending) func sharesAsync<T: PersistentModel>(of model: T) async throws -> [ModelShare] {
        let record = try shareableRecord(model)
        let store = container.store
        return try await roundTripAsync { try await store.shares(of: record) }
    }

    /// The name of the user who owns `model`, read from the store now: the user who created it (a child a
    /// read-write grantee adds to a shared record belongs to the record's owner). Nil for a row without an
    /// owner, one the direct store (`postgres://`) created. A model not saved yet, or not visible to
    /// this user, is `not_found`.
    ///
    /// ```swift
    /// let mine = try context.owner(of: trip) == container.currentUser?.name
    /// ```
    public func owner<T: PersistentModel>(of model: T) throws -> String? {
        let record = try shareableRecord(model)
        let store = container.store
        return try roundTrip { try await store.sharing(of: record) }.owner
    }

    /// ``owner(of:)``, suspending instead of blocking.
    ///
    /// ```swift
    /// let owner = try await context.ownerAsync(of: trip)
    /// ```
    public nonisolated(nonsending) func ownerAsync<T: PersistentModel>(of model: T) async throws -> String? {
        let record = try shareableRecord(model)
        let store = container.store
        return try await roundTripAsync { try await store.sharing(of: record) }.owner
    }

    private func addShareChange<T: PersistentModel>(_ model: T, user: String, permission: SharePermission?) throws {
        guard (1...128).contains(user.count) else {
            throw PGModelError(.invalidField, "a user name is 1 to 128 characters", model: T._$entityName)
        }
        let data = model._$backingData
        guard data.context === self, data.state != .detached else {
            throw PGModelError(.invalidField, "share a \(T._$entityName) that this context has inserted or fetched", model: T._$entityName)
        }
        mutationCount &+= 1
        pendingShares.append(PendingShare(model: model, user: user, permission: permission))
        scheduleAutosave()
    }

    private func shareableRecord<T: PersistentModel>(_ model: T) throws -> RowReference {
        guard container.schema.entity(for: T.self) != nil else {
            throw PGModelError(.unknownEntity, "\(T._$entityName) is not in this container's schema; add it to the ModelContainer", model: T._$entityName)
        }
        return RowReference(entity: type(of: model)._$entityName, id: model._$backingData.id)
    }
}

/// A share or revocation waiting for the next save. The model, not its id: an upsert may give an
/// inserted model another id before the save that shares it.
struct PendingShare {
    var model: any PersistentModel
    var user: String
    var permission: SharePermission?

    var change: ShareChange {
        ShareChange(record: RowReference(entity: type(of: model)._$entityName, id: model._$backingData.id), user: user, permission: permission)
    }
}
