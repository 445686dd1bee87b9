import Foundation
import Logging
import NIOCore
import NIOPosix
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelWire
import PostgresNIO
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The accepting half of a ``LineServer``: prepares the database, binds, and serves each connection in
/// its own child task until graceful shutdown.
struct LineListener: Service {
    let server: LineServer

    func run() async throws {
        let logger = server.logger
        try await prepareDatabase()

        let tracker = ConnectionTracker(maxConnections: server.configuration.maxConnections)
        var dispatcher = RequestDispatcher(gateway: server.gateway, logger: logger)
        dispatcher.tracer = DatabaseTracing.activeTracer(server.configuration.tracer)
        dispatcher.requestTimeout = server.configuration.requestTimeout
        dispatcher.maxResponseRows = server.configuration.maxResponseRows
        dispatcher.maxHistoryTransactions = server.configuration.maxHistoryTransactions
        dispatcher.maxResponseBytes = server.configuration.maxResponseBytes
        // One LISTEN connection for the whole server; sessions fan out from it. Created only now that the
        // database is known to be reachable, closed only after every connection has stopped forwarding.
        let database = server.databaseConfiguration
        // This instance in pgmodel.service_instances: registered by its doorbell connection (whose backend
        // tells the living from the dead), again whenever that connection is replaced.
        let instanceID = UUID()
        let engine = server.gateway.engine
        let host = Self.hostName()
        // LISTEN needs a session of its own: behind a pooler in transaction mode it goes to the direct URL.
        let changeListener = ChangeListener(
            configuration: database.sessionConfiguration.connection, schemaName: database.schemaName,
            eventLoop: server.eventLoopGroup.next(), logger: logger,
            onConnect: { connection in
                try await engine.registerInstance(id: instanceID, host: host, version: WireProtocol.serverName, on: connection)
            })
        server.readiness.attach(changeListener)
        do {
            try await server.gateway.purgeDeadInstances()
        } catch {
            logger.warning("could not purge dead instances from pgmodel.service_instances",
                           metadata: ["error": "\(LogText(PostgresErrorMapping.map(error).message))"])
        }
        let sessions = SessionRegistry(instanceID: instanceID, gateway: server.gateway, logger: logger)
        // Sessions are re-checked from the start: the doorbell listens for user changes all the time.
        let userChanges = changeListener.userChanges()
        let watcher = Task {
            await withDiscardingTaskGroup { group in
                group.addTask { await sessions.run() }
                group.addTask {
                    for await users in userChanges { sessions.hint(users) }
                    sessions.finish()
                }
            }
        }
        // History retention runs beside the listener and stops before the pool closes; a pass in progress
        // ends after the batch it is in.
        let retention = server.configuration.historyRetentionInterval.map { interval in
            let worker = HistoryRetentionWorker(gateway: server.gateway, interval: interval, logger: logger, metrics: server.metrics)
            return Task { await worker.run() }
        }
        // One reader of change events for every subscribed connection; it ends when the listener closes.
        let fanout = HistoryFanout(listener: changeListener, gateway: server.gateway, reads: server.visibilityReads,
                                   rounds: server.visibilityRounds,
                                   logger: logger, metrics: server.metrics)
        let fanning = Task { await fanout.run() }
        let finish = {
            retention?.cancel()
            await retention?.value
            await changeListener.close()
            await fanning.value
            await watcher.value
            do {
                try await server.gateway.removeInstance(id: instanceID)
            } catch {
                logger.warning("could not remove this instance from pgmodel.service_instances",
                               metadata: ["error": "\(LogText(PostgresErrorMapping.map(error).message))"])
            }
        }
        do {
            try await serve(tracker: tracker, dispatcher: dispatcher, fanout: fanout, sessions: sessions)
        } catch {
            await finish()
            throw error
        }
        await finish()
        logger.info("stopped")
    }

    private func serve(tracker: ConnectionTracker, dispatcher: RequestDispatcher, fanout: HistoryFanout,
                       sessions: SessionRegistry) async throws {
        let logger = server.logger
        let connectionServer = ConnectionServer(
            dispatcher: dispatcher, tracker: tracker, fanout: fanout, forwarders: server.forwarders,
            maxFailedAuthentications: server.configuration.maxFailedAuthentications,
            loginTimeout: server.configuration.loginTimeout,
            loginGuard: LoginGuard(policy: server.configuration.loginThrottle),
            loginAdmission: LoginAdmission(limit: server.configuration.maxPendingLogins),
            shareProbes: ShareProbeGuard(policy: server.configuration.shareProbeThrottle),
            takenValueProbes: TakenValueProbeGuard(policy: server.configuration.takenValueProbeThrottle),
            idleTimeout: server.configuration.idleTimeout, maxResponseBytes: server.configuration.maxResponseBytes,
            maxLineBytes: server.configuration.maxLineBytes, maxSaveBytes: server.configuration.maxSaveBytes,
            storeName: server.databaseConfiguration.schemaName,
            heldSaves: HeldSaveBudget(limit: server.configuration.maxHeldSaveBytes,
                                      perUserLimit: server.configuration.effectiveMaxHeldSaveBytesPerUser,
                                      gauge: server.metrics.heldSaves),
            heldSaveTimeout: server.configuration.heldSaveTimeout,
            heldSaveLifetime: server.configuration.heldSaveLifetime,
            runsShortRequestsOnEventLoop: server.configuration.runsShortRequestsOnEventLoop,
            maxConcurrentRequests: max(1, server.configuration.maxConcurrentRequests),
            sessions: sessions, isTLS: server.tlsContext != nil, logger: logger, metrics: server.metrics)
        let maxLineBytes = server.configuration.maxLineBytes
        let trustedProxies = server.trustedProxies
        let proxyHeaderTimeout = ConnectionDeadline.timeAmount(server.configuration.loginTimeout)
        let queued = server.configuration.maxQueuedRequests
        // Past the high watermark the inbox stops reading the socket: a client that pipelines without end
        // is held back by TCP flow control rather than by the server's memory.
        let (lowWatermark, highWatermark) = (max(1, queued / 2), queued)

        let listener: NIOAsyncChannel<AcceptedConnection, Never>
        do {
            listener = try await ServerBootstrap(group: server.eventLoopGroup)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.so_keepalive), value: 1)
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
                // A client may send its last request and half-close; it still gets its answers.
                .childChannelOption(.allowRemoteHalfClosure, value: true)
                .bind(host: server.configuration.host, port: server.configuration.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        // A trusted proxy's PROXY header comes first, before TLS: it is read by the first handler.
                        var proxied: EventLoopFuture<String>?
                        if !trustedProxies.isEmpty, let peer = channel.remoteAddress?.ipAddress, trustedProxies.contains(peer) {
                            let proxy = ProxyProtocolHandler(peer: peer, timeout: proxyHeaderTimeout, eventLoop: channel.eventLoop)
                            try channel.pipeline.syncOperations.addHandler(proxy)
                            proxied = proxy.address
                        }
                        // TLS, when on, sits under the framing: lines are read from the decrypted bytes.
                        try server.addTLSHandlers(to: channel)
                        let inbox = FrameInbox(eventLoop: channel.eventLoop, maxLineBytes: maxLineBytes,
                                               lowWatermark: lowWatermark, highWatermark: highWatermark)
                        try channel.pipeline.syncOperations.addHandler(inbox)
                        // Only its writer is used: the inbox, before it, reads the lines.
                        let connection = try NIOAsyncChannel<ReceivedFrame, ByteBuffer>(wrappingChannelSynchronously: channel)
                        return AcceptedConnection(channel: connection, inbox: inbox, proxiedAddress: proxied)
                    }
                }
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw PGModelError(
                .invalidConfiguration,
                "cannot listen on \(server.configuration.host):\(server.configuration.port): the port is in use (is another pgmodel serve running? --port or PGMODEL_PORT picks another)")
        } catch {
            throw PGModelError(
                .invalidConfiguration,
                "cannot listen on \(server.configuration.host):\(server.configuration.port): \(ConnectionFailureText.describe(error))")
        }
        let port = listener.channel.localAddress?.port ?? server.configuration.port
        logger.info("listening", metadata: ["host": "\(server.configuration.host)", "port": "\(port)",
                                            "tls": "\(server.tlsContext == nil ? "off" : "on")",
                                            "proxy_protocol": "\(trustedProxies.isEmpty ? "off" : "from \(server.configuration.trustedProxies.joined(separator: ","))")"])
        server.lifecycle.listening(on: port, tracker: tracker)

        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await listener.executeThenClose { connections in
                    for try await connection in connections {
                        group.addTask { await connectionServer.serve(connection) }
                    }
                }
                // Leaving this scope waits for every connection task: in-flight requests finish.
            }
        } onGracefulShutdown: {
            logger.info("shutting down: no new connections; finishing requests in progress")
            server.readiness.draining()
            tracker.beginShutdown()
            listener.channel.close(promise: nil)
            tracker.closeRemaining(after: ConnectionDeadline.timeAmount(server.configuration.shutdownGracePeriod),
                                   on: server.eventLoopGroup.next())
        }
    }

    /// This machine's host name (gethostname: no name resolution), for pgmodel.service_instances.
    static func hostName() -> String {
        let size = 256
        var buffer = [CChar](repeating: 0, count: size)
        guard gethostname(&buffer, size - 1) == 0 else { return "unknown" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Creates the system tables if needed and loads the registered entities, so that an unreachable
    /// database fails the start at once with a clear error.
    private func prepareDatabase() async throws {
        let schema = try await server.gateway.loadRegisteredSchema()
        server.readiness.schemaLoaded()
        server.logger.info(
            "database ready",
            metadata: ["schema": "\(server.databaseConfiguration.schemaName)", "entities": "\(schema.entities.count)"])
    }
}
