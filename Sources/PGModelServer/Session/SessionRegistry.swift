import Foundation
import Logging
import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelWire

/// This instance's logged-in connections, and the closing of those whose user changed.
///
/// A session keeps its user as read at login, `session_epoch` included. When `pgmodel.users` changes
/// (a password, the admin flag, a name, a revocation, a removal), its trigger rings the doorbell with
/// the user's id; that ring is only a hint, since anyone with a database role may ring. On a hint —
/// and for every user after the doorbell reconnects, as hints may have been missed — the registry
/// re-reads those users' epochs in one query and closes each session whose user is gone or whose epoch
/// is not its login's. A forged hint therefore costs one re-read and closes nothing.
///
/// A login that raced a hint (the hint came while its password was checked) is checked once more
/// after it registers, so no change slips between the login's read and its registration.
///
/// ```swift
/// let registry = SessionRegistry(instanceID: UUID(), gateway: gateway, logger: logger)
/// Task { await registry.run() }
/// registry.hint([alice.id])          // from ChangeListener.userChanges()
/// ```
final class SessionRegistry: Sendable {
    private struct Entry: Sendable {
        let session: RecordedSession
        let epoch: Int64
        let revoke: @Sendable (WireError) -> Void
    }

    private struct State {
        var entries: [UUID: Entry] = [:]
        /// Hints received so far: a login compares it before and after to know whether one raced it.
        var hints = 0
        /// Users to re-check at the next wake-up: only users with a session here, so forged rings naming
        /// other ids take no memory.
        var pending: Set<UUID> = []
        /// Re-check every session's user at the next wake-up.
        var pendingAll = false
        var isFinished = false
    }

    /// This instance's id in `pgmodel.service_instances`.
    let instanceID: UUID
    private let gateway: DatabaseGateway
    private let logger: Logger
    private let state = NIOLockedValueBox(State())
    /// Wake-ups of ``run()``; what to re-check is in ``State/pending``, so one buffered wake-up is enough.
    private let wakeUps: AsyncStream<Void>
    private let wakeUp: AsyncStream<Void>.Continuation

    init(instanceID: UUID, gateway: DatabaseGateway, logger: Logger) {
        self.instanceID = instanceID
        self.gateway = gateway
        self.logger = logger
        (wakeUps, wakeUp) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// How many hints have arrived; read before a login's password check, passed to ``register(_:epoch:hintsBeforeLogin:revoke:)``.
    var hintCount: Int { state.withLockedValue { $0.hints } }

    /// How many sessions are registered.
    var count: Int { state.withLockedValue { $0.entries.count } }

    /// Users `users` (nil: every user) may have changed: re-check their sessions.
    func hint(_ users: [UUID]?) {
        let wake = state.withLockedValue { state -> Bool in
            state.hints += 1
            guard let users else {
                state.pendingAll = true
                return true
            }
            let local = Set(state.entries.values.map(\.session.userID))
            let affected = users.filter { local.contains($0) }
            state.pending.formUnion(affected)
            return !affected.isEmpty
        }
        if wake { wakeUp.yield() }
    }

    /// Queues a re-check of `users` (nil: all).
    private func requestRecheck(_ users: Set<UUID>?) {
        state.withLockedValue { state in
            if let users { state.pending.formUnion(users) } else { state.pendingAll = true }
        }
        wakeUp.yield()
    }

    /// Registers a logged-in session whose login read `epoch`, and records it in `pgmodel.sessions`
    /// (best effort: a failure there is logged, the login stands). `revoke` closes the connection.
    func register(_ session: RecordedSession, epoch: Int64, hintsBeforeLogin: Int,
                  revoke: @escaping @Sendable (WireError) -> Void) async {
        let raced = state.withLockedValue { state -> Bool in
            state.entries[session.id] = Entry(session: session, epoch: epoch, revoke: revoke)
            return state.hints != hintsBeforeLogin
        }
        if raced { requestRecheck([session.userID]) }
        do {
            try await gateway.recordSessions([session], instance: instanceID)
        } catch {
            logger.warning("could not record a session in pgmodel.sessions",
                           metadata: ["error": "\(LogText(PostgresErrorMapping.map(error).message))"])
        }
    }

    /// Forgets an ended session (in `pgmodel.sessions` too, without making anyone wait).
    func remove(_ sessionID: UUID) {
        let removed = state.withLockedValue { $0.entries.removeValue(forKey: sessionID) }
        guard removed != nil else { return }
        let (gateway, logger) = (gateway, logger)
        Task {
            do {
                try await gateway.forgetSessions([sessionID])
            } catch {
                logger.debug("could not delete a session from pgmodel.sessions",
                             metadata: ["error": "\(LogText(PostgresErrorMapping.map(error).message))"])
            }
        }
    }

    /// Stops ``run()`` once the queued re-checks are done.
    func finish() {
        state.withLockedValue { $0.isFinished = true }
        wakeUp.finish()
    }

    /// Performs re-checks, one at a time in arrival order, until ``finish()``.
    func run() async {
        for await _ in wakeUps {
            let users = state.withLockedValue { state -> Set<UUID>?? in
                defer { state.pending = []; state.pendingAll = false }
                if state.pendingAll { return .some(nil) }
                return state.pending.isEmpty ? nil : .some(state.pending)
            }
            guard let users else { continue }
            await recheck(users)
        }
    }

    /// Re-reads `users` (nil: the users of every session) and closes their stale sessions. After a
    /// doorbell reconnect (nil) it also records every live session again: a peer instance may have
    /// purged this instance's rows while its doorbell connection was down.
    func recheck(_ users: Set<UUID>?) async {
        let entries = state.withLockedValue { Array($0.entries.values) }
        let affected = users.map { users in entries.filter { users.contains($0.session.userID) } } ?? entries
        guard !affected.isEmpty else { return }
        let ids = Array(Set(affected.map(\.session.userID)))
        let epochs: [UUID: Int64]
        do {
            epochs = try await gateway.sessionEpochs(of: ids)
        } catch {
            // Cannot tell: try again shortly rather than close sessions on a database hiccup.
            logger.warning("could not re-read users for their sessions; retrying",
                           metadata: ["error": "\(LogText(PostgresErrorMapping.map(error).message))"])
            try? await Task.sleep(for: .milliseconds(500))
            if !state.withLockedValue({ $0.isFinished }) { requestRecheck(users) }
            return
        }
        var stale: [Entry] = []
        state.withLockedValue { state in
            for entry in affected where epochs[entry.session.userID] != entry.epoch {
                if state.entries.removeValue(forKey: entry.session.id) != nil { stale.append(entry) }
            }
        }
        for entry in stale {
            let message = epochs[entry.session.userID] == nil
                ? "this user was removed; the session is closed"
                : "this user's password, admin status or name changed, or their sessions were ended by an operator; log in again"
            entry.revoke(WireError(.sessionRevoked, message))
        }
        if !stale.isEmpty {
            logger.info("closed revoked sessions", metadata: ["sessions": "\(stale.count)"])
            try? await gateway.forgetSessions(stale.map(\.session.id))
        }
        if users == nil {
            let live = state.withLockedValue { $0.entries.values.map(\.session) }
            do {
                try await gateway.recordSessions(live, instance: instanceID)
            } catch {
                logger.warning("could not record sessions in pgmodel.sessions",
                               metadata: ["error": "\(LogText(PostgresErrorMapping.map(error).message))"])
            }
        }
    }
}
