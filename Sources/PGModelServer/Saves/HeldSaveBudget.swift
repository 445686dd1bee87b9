import Foundation
import Metrics
import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModelWire

/// The bytes of unfinished saves in parts the server holds, across every connection, and their bounds
/// (``LineServerConfiguration/maxHeldSaveBytes`` for all users, ``LineServerConfiguration/maxHeldSaveBytesPerUser``
/// for each): many connections each holding a save's worth of parts must not add up to more memory than
/// the operator allowed, and one user must not take the room every other user's saves need. Connections
/// reserve each part's size before holding it and release their save's bytes when it runs, is dropped, or
/// the connection closes. The arithmetic is ``HeldSaveLedger``'s.
///
/// ```swift
/// let budget = HeldSaveBudget(limit: 384 << 20, perUserLimit: 192 << 20)
/// if budget.reserve(line.readableBytes, for: user.id) { /* hold the part */ }
/// budget.release(assembly.drop(), for: user.id)
/// ```
final class HeldSaveBudget: Sendable {
    let limit: Int
    private let ledger: NIOLockedValueBox<HeldSaveLedger<UUID>>
    /// Where the bytes held are reported (``ServerMetrics``); nil reports nothing.
    private let gauge: Gauge?

    init(limit: Int, perUserLimit: Int, gauge: Gauge? = nil) {
        self.gauge = gauge
        self.limit = max(0, limit)
        ledger = NIOLockedValueBox(HeldSaveLedger(limit: limit, perUserLimit: perUserLimit))
    }

    /// Takes `bytes` for `user` if they fit under the server's limit and the user's share.
    func reserve(_ bytes: Int, for user: UUID) -> Bool {
        let (taken, held) = ledger.withLockedValue { ($0.reserve(bytes, for: user), $0.held) }
        gauge?.record(held)
        return taken
    }

    /// Gives back `bytes` taken by ``reserve(_:for:)``.
    func release(_ bytes: Int, for user: UUID) {
        guard bytes > 0 else { return }
        let held = ledger.withLockedValue { ledger in
            ledger.release(bytes, for: user)
            return ledger.held
        }
        gauge?.record(held)
    }

    /// What is held now, for tests and logs.
    var heldBytes: Int { ledger.withLockedValue { $0.held } }
}
