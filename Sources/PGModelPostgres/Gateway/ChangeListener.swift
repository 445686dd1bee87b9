import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelSQL
import PostgresNIO

/// The doorbell: one dedicated connection that `LISTEN`s on `pgmodel_changes` and fans each save of one
/// store out to any number of signal streams.
///
/// Every time `LISTEN` takes effect — the first time and after every reconnect (PostgreSQL restarted, the
/// backend was terminated, the network dropped) — it yields ``ChangeSignal/Kind/reconnected``: rings may
/// have been missed, so readers catch up from their history tokens. Reconnects back off from 50 ms to 2 s
/// and go on until ``close()``.
///
/// ```swift
/// let listener = ChangeListener(configuration: config, schemaName: "public", eventLoop: loop, logger: logger)
/// for await signal in listener.signals() { print(signal.kind, signal.entities) }
/// ```
@_spi(PGModelInternals) public final class ChangeListener: Sendable {
    private struct State {
        var streams: [Int: AsyncStream<ChangeSignal>.Continuation] = [:]
        var userStreams: [Int: AsyncStream<[UUID]?>.Continuation] = [:]
        var nextID = 0
        var task: Task<Void, Never>?
        var connection: PostgresConnection?
        var isClosed = false
        /// Whether LISTEN is in force now (for readiness checks).
        var isListening = false
        /// Whether LISTEN was ever in force: a listener without it is still connecting, not reconnecting.
        var hasListened = false
        /// Whether a ring of this store came since the missed-ring check last looked.
        var rangSinceCheck = false
    }

    /// How often the listener checks for a save whose doorbell never came. A save rings after its commit
    /// (in a statement of its own); a process that dies between the two leaves its save unannounced.
    static let missedRingCheckInterval = Duration.seconds(2)

    private let configuration: PostgresConnection.Configuration
    private let schemaName: String
    private let eventLoop: any EventLoop
    private let logger: Logger
    private let state = NIOLockedValueBox(State())
    /// Runs on every new doorbell connection before it listens (a service instance registers its backend).
    private let onConnect: (@Sendable (EngineConnection) async throws -> Void)?

    /// A listener for `schemaName`'s rings. `onConnect` runs on each new doorbell connection before its
    /// `LISTEN`; when it throws, the connection is replaced as if it had failed.
    public init(configuration: PostgresConnection.Configuration, schemaName: String, eventLoop: any EventLoop, logger: Logger,
                onConnect: (@Sendable (EngineConnection) async throws -> Void)? = nil) {
        self.onConnect = onConnect
        var configuration = configuration
        // Lets an admin (and the tests) tell the doorbell connections apart in pg_stat_activity.
        configuration.options.additionalStartupParameters.append(("application_name", Self.applicationName(schemaName)))
        self.configuration = configuration
        self.schemaName = schemaName
        self.eventLoop = eventLoop
        self.logger = logger
    }

    /// A new stream of user-change hints (`{"u": [ids]}` rings, from `pgmodel.users`' trigger): the ids
    /// of users whose sessions must be checked again, or nil for every user, yielded each time `LISTEN`
    /// takes effect (hints may have been missed). Hints only: anyone may ring, so the reader re-reads
    /// `pgmodel.users`. It ends when the listener closes or the consumer stops; it starts the listener.
    ///
    /// ```swift
    /// for await users in listener.userChanges() { await recheck(users) }
    /// ```
    public func userChanges() -> AsyncStream<[UUID]?> {
        // Not one hint may be dropped (a dropped one would leave a revoked session open); the reader only
        // merges them into a set, without waiting, so the buffer stays short.
        let (stream, continuation) = AsyncStream.makeStream(of: [UUID]?.self, bufferingPolicy: .unbounded)
        let start = state.withLockedValue { state -> Bool? in
            guard !state.isClosed else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.userStreams[id] = continuation
            continuation.onTermination = { [weak self] _ in
                self?.state.withLockedValue { _ = $0.userStreams.removeValue(forKey: id) }
            }
            return state.task == nil
        }
        guard let start else {
            continuation.finish()
            return stream
        }
        if start { startTask() }
        return stream
    }

    private func startTask() {
        state.withLockedValue { state in
            guard state.task == nil, !state.isClosed else { return }
            state.task = Task { [self] in await run() }
        }
    }

    /// A new stream of this store's signals; it ends when the listener closes or the consumer stops.
    public func signals() -> AsyncStream<ChangeSignal> {
        // Rings carry no data, so a slow consumer may drop old ones; it then still gets the newest.
        let (stream, continuation) = AsyncStream.makeStream(of: ChangeSignal.self, bufferingPolicy: .bufferingNewest(256))
        let start = state.withLockedValue { state -> Bool in
            guard !state.isClosed else { return false }
            let id = state.nextID
            state.nextID += 1
            state.streams[id] = continuation
            continuation.onTermination = { [weak self] _ in
                self?.state.withLockedValue { _ = $0.streams.removeValue(forKey: id) }
            }
            return state.task == nil
        }
        if state.withLockedValue({ $0.isClosed }) {
            continuation.finish()
            return stream
        }
        if start { startTask() }
        return stream
    }

    /// Stops listening and ends every stream.
    public func close() async {
        let (task, connection, streams, userStreams) = state.withLockedValue { state in
            defer { state.isClosed = true; state.streams = [:]; state.userStreams = [:]; state.task = nil; state.connection = nil }
            return (state.task, state.connection, Array(state.streams.values), Array(state.userStreams.values))
        }
        task?.cancel()
        try? await connection?.close()
        for stream in streams { stream.finish() }
        for stream in userStreams { stream.finish() }
    }

    private var isClosed: Bool { state.withLockedValue { $0.isClosed } }

    /// Where the listener is: `idle` until something starts it, `connecting` until LISTEN first takes
    /// effect, `listening` while it is in force, `reconnecting` after it lost its connection, `closed`.
    public var status: ListenerStatus {
        state.withLockedValue { state in
            if state.isClosed { return .closed }
            if state.task == nil { return .idle }
            if state.isListening { return .listening }
            return state.hasListened ? .reconnecting : .connecting
        }
    }

    private func broadcast(_ signal: ChangeSignal) {
        let streams = state.withLockedValue { Array($0.streams.values) }
        for stream in streams { stream.yield(signal) }
    }

    private func broadcastUsers(_ users: [UUID]?) {
        let streams = state.withLockedValue { Array($0.userStreams.values) }
        for stream in streams { stream.yield(users) }
    }

    private func run() async {
        var backoff = Duration.milliseconds(50)
        var attempt = 0
        while !isClosed && !Task.isCancelled {
            attempt += 1
            var connection: PostgresConnection?
            do {
                let opened = try await PostgresConnection.connect(on: eventLoop, configuration: configuration, id: attempt, logger: logger)
                // Closed while connecting: close() found no connection to close, so this one is ours to end.
                let closedMeanwhile = state.withLockedValue { state -> Bool in
                    if state.isClosed { return true }
                    state.connection = opened
                    return false
                }
                if closedMeanwhile {
                    try? await opened.close()
                    break
                }
                connection = opened
                if let onConnect { try await onConnect(EngineConnection(opened)) }
                try await opened.listen(on: HistorySQL.channel) { notifications in
                    backoff = .milliseconds(50)
                    logger.debug("listening for history", metadata: ["schema": "\(schemaName)"])
                    broadcast(ChangeSignal(.reconnected))
                    broadcastUsers(nil)
                    // Listening is reported after the streams heard `reconnected`: a stream opened once
                    // the status says `listening` has missed nothing and gets no such signal.
                    state.withLockedValue { $0.isListening = true; $0.hasListened = true }
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask { try await self.checkForMissedRings(on: opened) }
                        for try await notification in notifications {
                            if let entities = Self.entities(in: notification.payload, schema: schemaName) {
                                state.withLockedValue { $0.rangSinceCheck = true }
                                broadcast(ChangeSignal(.committed, entities: entities))
                            } else if let users = Self.users(in: notification.payload) {
                                broadcastUsers(users)
                            }
                        }
                        group.cancelAll()
                    }
                }
            } catch {
                if !isClosed {
                    logger.warning("history listener lost its connection; reconnecting",
                                   metadata: ["schema": "\(schemaName)", "error": "\(PostgresErrorMapping.map(error).message)"])
                }
            }
            state.withLockedValue { $0.connection = nil; $0.isListening = false }
            try? await connection?.close()
            if isClosed || Task.isCancelled { break }
            try? await Task.sleep(for: backoff)
            backoff = min(backoff * 2, .seconds(2))
        }
    }

    /// Rings for saves whose doorbell never came: every ``missedRingCheckInterval`` it reads the store's
    /// newest history position (one index probe); a newer one that no ring followed within an interval is
    /// rung for, with no class names (readers catch up from their tokens). A ring that came after the
    /// newer position was seen was sent after that save committed, so its readers see the save.
    private func checkForMissedRings(on connection: PostgresConnection) async throws {
        // The first look only learns where history is (0: none yet).
        var newest: Int64?
        var unannounced = false
        while !Task.isCancelled {
            let rows = try await connection.query(
                "SELECT coalesce(max(position), 0) FROM pgmodel.transactions WHERE schema_name = \(schemaName)", logger: logger)
            var current: Int64 = 0
            for try await row in rows { current = try row.decode(Int64.self) }
            if let known = newest, current > known {
                unannounced = true
                state.withLockedValue { $0.rangSinceCheck = false }
            }
            newest = max(current, newest ?? current)
            try await Task.sleep(for: Self.missedRingCheckInterval)
            let rang = state.withLockedValue { $0.rangSinceCheck }
            if unannounced && !rang {
                logger.debug("ringing for a save whose doorbell did not come", metadata: ["schema": "\(schemaName)"])
                broadcast(ChangeSignal(.committed))
            }
            unannounced = false
        }
    }

    /// `application_name` of the listening connection: `pgmodel listener <schema>` (PostgreSQL keeps 63 bytes).
    public static func applicationName(_ schemaName: String) -> String {
        String(("pgmodel listener " + schemaName).utf8.prefix(63)) ?? "pgmodel listener"
    }

    /// The entity names of a doorbell payload for `schema`; nil for another store's ring or a payload
    /// that is not PGModel's (anyone may NOTIFY the channel).
    static func entities(in payload: String, schema: String) -> [String]? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any],
              object["s"] as? String == schema else { return nil }
        return object["e"] as? [String] ?? []
    }

    /// The user ids of a user-change hint (`{"u": ["<uuid>", …]}`); nil for anything else. At most
    /// 1,000 ids are taken from one ring (a real one names one or two): a forged ring cannot make the
    /// re-read large.
    static func users(in payload: String) -> [UUID]? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any],
              let ids = object["u"] as? [Any] else { return nil }
        return ids.prefix(1000).compactMap { ($0 as? String).flatMap(UUID.init(uuidString:)) }
    }
}
