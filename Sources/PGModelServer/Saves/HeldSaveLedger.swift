@_spi(PGModelInternals) import PGModelWire
/// The bytes of unfinished saves in parts the server holds, all connections together and per user, without
/// locks or sockets: a part is held only if it fits both under the server's limit and under its user's
/// share, so one user (however many connections they open) can never take the room every other user's
/// saves need.
///
/// ```swift
/// var ledger = HeldSaveLedger<UUID>(limit: 384 << 20, perUserLimit: 192 << 20)
/// if ledger.reserve(part.bytes, for: user.id) { /* hold the part */ }
/// ledger.release(bytes, for: user.id)
/// ```
@_spi(PGModelInternals) public struct HeldSaveLedger<User: Hashable & Sendable>: Sendable {
    /// The most bytes held at once, all users together.
    public let limit: Int
    /// The most bytes one user's saves may hold at once.
    public let perUserLimit: Int
    /// What is held now, all users together.
    public private(set) var held = 0
    private var byUser: [User: Int] = [:]

    /// `perUserLimit` is cut to `limit`.
    public init(limit: Int, perUserLimit: Int) {
        self.limit = max(0, limit)
        self.perUserLimit = min(max(0, perUserLimit), self.limit)
    }

    /// What `user` holds now.
    public func held(by user: User) -> Int { byUser[user] ?? 0 }

    /// How many users hold something.
    public var holders: Int { byUser.count }

    /// Takes `bytes` for `user` if they fit under both limits; false takes nothing.
    public mutating func reserve(_ bytes: Int, for user: User) -> Bool {
        let own = byUser[user] ?? 0
        guard bytes >= 0, bytes <= limit - held, bytes <= perUserLimit - own else { return false }
        held += bytes
        byUser[user] = own + bytes
        return true
    }

    /// Gives back `bytes` that ``reserve(_:for:)`` took for `user`.
    public mutating func release(_ bytes: Int, for user: User) {
        guard bytes > 0, let own = byUser[user] else { return }
        let given = min(own, bytes)
        held -= given
        byUser[user] = own - given == 0 ? nil : own - given
    }
}
