/// A doorbell ring from a store: something may have changed; read history from your token to learn
/// what. Signals may be coalesced or repeated; the history log is the truth. A ring through the service
/// may carry the history it announces (``history``), which the server read for its receiver anyway: a
/// reader whose token it covers takes it instead of reading the same page again.
///
/// ```swift
/// for await signal in store.changeSignals() {
///     if signal.kind == .reconnected || !observed.isDisjoint(with: signal.entities) { catchUp() }
/// }
/// ```
@_spi(PGModelInternals) public struct ChangeSignal: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable {
        /// A save committed; ``ChangeSignal/entities`` names the classes it touched (empty: unknown).
        case committed
        /// The store's listening connection was re-established after a drop: signals may have been
        /// missed, so every reader must catch up from its token.
        case reconnected
    }

    /// The history a ring announces, as its receiver may see it: every transaction visible to them whose
    /// token is greater than ``after``, in token order, as far as the server had read when it rang.
    ///
    /// ```swift
    /// if let history = signal.history, history.after <= token {
    ///     deliver(history.transactions.filter { $0.token > token })   // instead of reading from `token`
    /// }
    /// ```
    public struct VisibleHistory: Hashable, Sendable {
        /// The token the transactions follow: none visible to the receiver lies between it and the first.
        public var after: UInt64
        /// The transactions, oldest first.
        public var transactions: [HistoryRecord]

        public init(after: UInt64, transactions: [HistoryRecord]) {
            self.after = after
            self.transactions = transactions
        }

        /// The token of the newest transaction, or ``after`` when there is none.
        public var through: UInt64 { transactions.last?.token ?? after }

        /// `self` followed by `later`, when `later` continues where this ends; nil otherwise.
        public func followed(by later: VisibleHistory) -> VisibleHistory? {
            guard later.after == through else { return nil }
            return VisibleHistory(after: after, transactions: transactions + later.transactions)
        }
    }

    public var kind: Kind
    /// Concrete class names the save touched; empty when unknown (treat as "anything").
    public var entities: [String]
    /// The history the ring announces, when the store read it for the receiver; nil: read it yourself.
    public var history: VisibleHistory?

    public init(_ kind: Kind, entities: [String] = [], history: VisibleHistory? = nil) {
        self.kind = kind
        self.entities = entities
        self.history = history
    }
}
