/// A doorbell ring from a store: something may have changed; read history from your token to learn
/// what. Signals carry no data and may be coalesced or repeated; the history log is the truth.
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

    public var kind: Kind
    /// Concrete class names the save touched; empty when unknown (treat as "anything").
    public var entities: [String]

    public init(_ kind: Kind, entities: [String] = []) {
        self.kind = kind
        self.entities = entities
    }
}
