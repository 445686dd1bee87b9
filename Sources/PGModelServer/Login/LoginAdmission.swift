import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModelWire

/// Bounds the logins a server checks or queues at once, across every connection.
///
/// Password checks are slow on purpose (bcrypt) and run on a few reserved database connections, so
/// a crowd of clients connecting together — a restart, a failover, a deploy — queues behind them. A
/// queue longer than a client waits only fills with checks nobody will read: each client gives up,
/// reconnects and queues again, and the server spends its bcrypt work on abandoned logins. Past the
/// bound a `hello` is answered `server_busy` at once, with no password checked and nothing counted
/// against the user or the connection; the client retries after a short, random pause.
///
/// ```swift
/// let admission = LoginAdmission(limit: 64)
/// guard admission.enter() else { return busyAnswer }
/// defer { admission.leave() }
/// ```
final class LoginAdmission: Sendable {
    /// The most logins checked or waiting at once.
    let limit: Int
    private let pending = NIOLockedValueBox(0)

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Takes a place for one login; `false` when ``limit`` logins already hold one.
    func enter() -> Bool {
        pending.withLockedValue { pending in
            guard pending < limit else { return false }
            pending += 1
            return true
        }
    }

    /// Gives back the place ``enter()`` took.
    func leave() {
        pending.withLockedValue { $0 = max(0, $0 - 1) }
    }

    /// Logins checked or waiting now.
    var pendingCount: Int { pending.withLockedValue { $0 } }

    /// The answer to a `hello` that found no place.
    static let busy = WireError(.serverBusy, "the server is checking as many logins as it can; nothing was checked; retry after a short, random pause")
}
