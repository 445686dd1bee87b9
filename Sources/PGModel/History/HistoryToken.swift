@_spi(PGModelInternals) import PGModelCore

/// A position in a store's persistent history. Tokens are Codable (save them, resume later) and
/// Comparable (`$0.token > saved` in a history predicate).
///
/// ```swift
/// let data = try JSONEncoder().encode(transaction.token)
/// let saved = try JSONDecoder().decode(DefaultHistoryToken.self, from: data)
/// ```
public protocol HistoryToken: Codable, Comparable, Hashable, Sendable {}

/// PGModel's history token: the PostgreSQL transaction id (`xid8`) of a history transaction, and the
/// store (PostgreSQL schema) it belongs to.
///
/// Stores only hand out transactions that committed before every still-running transaction began,
/// so resuming from a saved token never skips a transaction that committed late.
///
/// ```swift
/// let after = #Predicate<DefaultHistoryTransaction> { $0.token > saved }
/// ```
public struct DefaultHistoryToken: HistoryToken, Identifiable, CustomStringConvertible {
    /// The history transaction's `xid8`.
    public let value: UInt64
    /// The PostgreSQL schema of the store.
    public let storeIdentifier: String

    public init(value: UInt64, storeIdentifier: String) {
        self.value = value
        self.storeIdentifier = storeIdentifier
    }

    public var id: UInt64 { value }

    /// Tokens of one store compare by commit visibility order (xid).
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.value < rhs.value }

    public var description: String { "\(storeIdentifier):\(value)" }
}
