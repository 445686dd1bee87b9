@_spi(PGModelInternals) import PGModelClient

extension ModelContainer {
    /// The service user this container is logged in as (`pgmodel://user:password@…`), or nil on a
    /// direct `postgres://` store, whose rows have no owner and which sees every row.
    ///
    /// ```swift
    /// guard let user = container.currentUser else { return }   // the direct store
    /// print(user.name, user.isAdmin)
    /// ```
    public var currentUser: ModelUser? {
        guard let remote = store as? RemoteModelStore, let user = remote.loggedInUser else { return nil }
        return ModelUser(name: user.name, id: user.id, isAdmin: user.isAdmin)
    }
}
