import NIOConcurrencyHelpers

/// The bytes of unfinished saves in parts the server holds, across every connection, and their bound
/// (``LineServerConfiguration/maxHeldSaveBytes``): many connections each holding a save's worth of parts
/// must not add up to more memory than the operator allowed. Connections reserve each part's line length
/// before holding it and release their save's bytes when it runs, is dropped, or the connection closes.
///
/// ```swift
/// let budget = HeldSaveBudget(limit: 256 << 20)
/// if budget.reserve(line.readableBytes) { /* hold the part */ }
/// budget.release(assembly.drop())
/// ```
final class HeldSaveBudget: Sendable {
    let limit: Int
    private let held = NIOLockedValueBox(0)

    init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// Takes `bytes` if they fit under the limit with what is held already.
    func reserve(_ bytes: Int) -> Bool {
        held.withLockedValue { held in
            guard bytes >= 0, bytes <= limit - held else { return false }
            held += bytes
            return true
        }
    }

    /// Gives back `bytes` taken by ``reserve(_:)``.
    func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        held.withLockedValue { $0 = max(0, $0 - bytes) }
    }

    /// What is held now, for tests and logs.
    var heldBytes: Int { held.withLockedValue { $0 } }
}
