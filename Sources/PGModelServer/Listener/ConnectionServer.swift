import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelWire

/// Serves one client connection: reads frames in order, lets the ``SessionStateMachine`` decide,
/// performs the decision and writes exactly one response line per request. A connection's requests
/// run one after another (so responses come back in request order); connections run concurrently.
///
/// ```swift
/// await ConnectionServer(dispatcher: dispatcher, tracker: tracker, …).serve(accepted)
/// ```
struct ConnectionServer: Sendable {
    let dispatcher: RequestDispatcher
    let tracker: ConnectionTracker
    /// The instance's one reader of change events; subscribed connections register with it.
    let fanout: HistoryFanout
    let forwarders: ServerCounter
    let maxFailedAuthentications: Int
    /// How long a connection may stay without a successful `hello`.
    let loginTimeout: Duration
    /// Failed logins across every connection.
    let loginGuard: LoginGuard
    /// Logins checked or waiting across every connection; past its limit a `hello` is `server_busy`.
    let loginAdmission: LoginAdmission
    /// Share requests answered `not_found`, across every connection.
    let shareProbes: ShareProbeGuard
    /// Slows users whose saves keep meeting values unique across all users that are taken.
    let takenValueProbes: TakenValueProbeGuard
    /// How long a connection may send nothing (without a subscription); `nil` is forever.
    let idleTimeout: Duration?
    /// The longest response line; a longer answer becomes `result_too_large`.
    let maxResponseBytes: Int
    /// The request-line limit, reported by `hello` so clients size their saves' parts by it.
    let maxLineBytes: Int
    /// The most one save in parts may hold (``SaveAssembly``).
    let maxSaveBytes: Int
    /// The schema `hello` reports as the store.
    let storeName: String
    /// What the server's connections hold of unfinished saves in parts, together.
    let heldSaves: HeldSaveBudget
    /// How long a held save in parts may wait for its next part (``HeldSaveWatchdog``).
    let heldSaveTimeout: Duration
    /// How long one save in parts may take from its first part to its last; nil is no limit.
    let heldSaveLifetime: Duration?
    /// Whether short requests run on the connection's event loop (``RequestWeight``).
    let runsShortRequestsOnEventLoop: Bool
    /// Ordinary requests a concurrent connection runs at once (``LineServerConfiguration/maxConcurrentRequests``).
    let maxConcurrentRequests: Int
    /// This instance's logged-in sessions, closed when their user changes.
    let sessions: SessionRegistry
    /// Whether connections are TLS (recorded with each session).
    let isTLS: Bool
    let logger: Logger
    /// Requests, logins, connections and sessions, counted (``ServerMetrics``).
    let metrics: ServerMetrics

    func serve(_ accepted: AcceptedConnection) async {
        guard runsShortRequestsOnEventLoop else { return await serve(accepted, on: nil) }
        // The connection's task runs where its bytes arrive and leave, and where the pool prefers a
        // database connection: a short request then wakes no other thread on its way through. What grows
        // with the request leaves the loop (``RequestWeight``).
        let executor = EventLoopTaskExecutor(eventLoop: accepted.channel.channel.eventLoop)
        await withTaskExecutorPreference(executor) { await serve(accepted, on: executor) }
    }

    private func serve(_ accepted: AcceptedConnection, on executor: EventLoopTaskExecutor?) async {
        let connection = accepted.channel
        let remote = connection.channel.remoteAddress.map { "\($0)" } ?? "unknown"
        var logger = logger
        logger[metadataKey: "peer"] = "\(remote)"

        switch tracker.admit(connection.channel) {
        case .admitted:
            break
        case .tooManyConnections:
            logger.warning("connection refused: too many connections")
            await refuse(connection, WireError(.tooManyConnections, "the server is at its connection limit; try again later"))
            return
        case .shuttingDown:
            await refuse(connection, WireError(.shuttingDown, "the server is shutting down"))
            return
        }
        defer { tracker.remove(connection.channel) }
        metrics.connections.increment()
        defer { metrics.connections.decrement() }
        // Behind a trusted proxy the client's address is the PROXY header's: it drives the login
        // throttle and the logs. A trusted proxy's connection without a valid header is closed.
        var address = LoginGuard.address(of: connection.channel)
        if let proxied = accepted.proxiedAddress {
            do {
                address = try await proxied.get()
            } catch {
                logger.notice("connection from a trusted proxy closed: no valid PROXY protocol header",
                              metadata: ["reason": "\(LogText("\(error)"))"])
                try? await connection.executeThenClose { _, _ in }
                return
            }
            let proxy = connection.channel.remoteAddress
            logger[metadataKey: "peer"] = "\(address) via \(proxy?.ipAddress ?? "unknown"):\(proxy?.port ?? 0)"
        }
        // PROTOCOL §8: connections are logged at info level (with the peer's address, from the logger's
        // metadata), and so is each request's one line (``RequestLog``).
        let opened = ContinuousClock.now
        logger.info("connection opened")
        let sessionID = UUID()
        defer { sessions.remove(sessionID) }

        do {
            try await connection.executeThenClose { _, outbound in
                let subscriptions = SessionSubscriptions(
                    fanout: fanout, outbound: outbound, counter: forwarders, logger: logger, metrics: metrics)
                // A connection that never logs in is told so and closed: it holds a socket and a slot.
                let login = LoginWatchdog(outbound: outbound, channel: connection.channel, timeout: loginTimeout, logger: logger)
                login.start()
                defer { login.stop() }
                let idle = idleTimeout.map { timeout in
                    IdleWatchdog(outbound: outbound, channel: connection.channel, timeout: timeout, logger: logger) {
                        subscriptions.isListening
                    }
                }
                idle?.start()
                defer { idle?.stop() }
                let heldSave = HeldSaveWatchdog(outbound: outbound, channel: connection.channel, timeout: heldSaveTimeout, logger: logger)
                defer { heldSave.stop() }
                let revocation = SessionRevocation(outbound: outbound, channel: connection.channel, logger: logger)
                let client = Client(outbound: outbound, channel: connection.channel, executor: executor, subscriptions: subscriptions, login: login, idle: idle,
                                    heldSave: heldSave, revocation: revocation, sessionID: sessionID, address: address, logger: logger)
                do {
                    try await serveRequests(accepted.inbox, client)
                } catch {
                    await subscriptions.close()
                    throw error
                }
                // Forwarding stops before the socket closes, so no event task outlives its connection.
                await subscriptions.close()
            }
        } catch {
            // The peer went away or the socket failed: nothing to answer, nothing to keep.
            logger.debug("connection ended with an error", metadata: ["error": "\(type(of: error))"])
        }
        logger.info("connection closed", metadata: ["seconds": "\((ContinuousClock.now - opened).components.seconds)"])
    }

    /// What one connection's requests are performed with.
    private struct Client {
        let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
        /// The connection's channel, written to directly when nothing is held back (``write(_:)``).
        let channel: any Channel
        /// The connection's event loop, where its short requests run; nil when they run on the global executor.
        let executor: EventLoopTaskExecutor?
        let subscriptions: SessionSubscriptions
        let login: LoginWatchdog
        let idle: IdleWatchdog?
        /// Closes the connection when its save in parts waits too long for its next part.
        let heldSave: HeldSaveWatchdog
        /// Closes the connection when its user changes (``SessionRegistry``).
        let revocation: SessionRevocation
        /// The id under which the session is registered once logged in.
        let sessionID: UUID
        /// The schema versions this connection registered (see ``SessionSchemaVersions``).
        let schemaVersions = SessionSchemaVersions()
        /// The newest commit of this connection's saves, which its reads wait for on a standby.
        let commitPosition = SessionCommitPosition()
        /// Names the connection's requests in the logs and error answers.
        let requestIDs = RequestIDSource()
        /// The client's IP address (no port; behind a trusted proxy, the one its PROXY header names), for
        /// the login throttle.
        let address: String
        let logger: Logger

        /// Writes one answer: straight to the channel when this runs on its event loop and the channel is
        /// writable, else through the async writer, which waits for writability (a client that stops reading
        /// stops the connection's requests).
        ///
        /// On the loop and writable, the writer holds nothing back: its buffered lines go out on the loop
        /// when the channel turns writable, before any job of this task runs there, so answers keep their
        /// order, also after an answer written through the writer from another thread (its write was queued on
        /// the loop before this task could run there again). The direct write skips the writer's hand-off,
        /// a visible part of a point fetch.
        func write(_ line: ByteBuffer) async throws {
            if channel.eventLoop.inEventLoop, channel.isWritable {
                channel.writeAndFlush(line, promise: nil)
            } else {
                try await outbound.write(line)
            }
        }
    }

    /// Reads and answers requests until the peer stops sending, a `bye`, or shutdown.
    private func serveRequests(_ inbox: FrameInbox, _ client: Client) async throws {
                let logger = client.logger
                var session = SessionStateMachine(maxFailedAuthentications: maxFailedAuthentications,
                                                  maxLineBytes: maxLineBytes, maxSaveBytes: maxSaveBytes,
                                                  storeName: storeName)
                var assembly = SaveAssembly(maxSaveBytes: maxSaveBytes, maxLifetime: heldSaveLifetime)
                // Whose share of the held-save budget the open save takes: the connection's user.
                var holder: UUID?
                // A save still held when the connection ends is dropped with it.
                defer { if let holder { heldSaves.release(assembly.drop(), for: holder) } }
                // A logged-in session is counted until its connection ends.
                var loggedIn = false
                defer { if loggedIn { metrics.sessions.decrement() } }
                // Whether the login asked to have its ordinary requests run side by side (`concurrent`).
                var asksConcurrency = false
                var isConcurrent = false
                try await withThrowingTaskGroup(of: Void.self) { running in
                    var inFlight = 0
                    while let received = try await inbox.next() {
                        let action: SessionStateMachine.Action
                        var lineBytes = 0
                        switch received.frame {
                        case .lineTooLong(let limit):
                            logger.notice("line too long", metadata: ["limit": "\(limit)"])
                            action = session.receiveOversizedLine(limit: limit)
                        case .line(let line):
                            lineBytes = line.readableBytes
                            // Blank lines are not requests; skipping them lets people type into `nc` freely.
                            if line.readableBytesView.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) {
                                continue
                            }
                            let request = await RequestWeight.run(heavy: client.executor != nil && RequestWeight.isHeavy(line: line)) {
                                Request.decode(line: line)
                            }
                            action = session.receive(request)
                        }
                        // The user changed since the login: nothing more runs as the user the login read.
                        guard !client.revocation.isRevoked else { break }
                        // Closed as idle meanwhile: the request is not run (the client may resend it elsewhere).
                        guard client.idle?.requestStarted() ?? true else { break }
                        // Closed for a save that waited too long for its next part: not run either.
                        guard client.heldSave.requestStarted() else {
                            await client.heldSave.closingFinished()
                            break
                        }
                        // Only a logged-in connection holds parts, and its user never changes.
                        if holder == nil, case .authenticated(let user) = session.state { holder = user.id }
                        if isConcurrent, case .execute(let request, let user) = action, Self.runsAlongside(request) {
                            // Runs beside the connection's other ordinary requests, at most
                            // `maxConcurrentRequests` at once; its answer goes out when it is done.
                            if inFlight >= maxConcurrentRequests {
                                _ = try await running.next()
                                inFlight -= 1
                            }
                            inFlight += 1
                            // On the connection's event loop, as a request run in order would be (``RequestWeight``).
                            running.addTask(executorPreference: client.executor) { [self] in
                                defer {
                                    client.heldSave.requestFinished()
                                    client.idle?.requestFinished()
                                }
                                try await write(await execute(request, as: user, received: received.received, client), to: client)
                            }
                            if tracker.isShuttingDown { break }
                            continue
                        }
                        // Anything else waits for the requests running and holds back those after it.
                        while inFlight > 0 {
                            _ = try await running.next()
                            inFlight -= 1
                        }
                        if case .authenticate(_, let hello) = action { asksConcurrency = hello.concurrent }
                        let keepOpen = try await perform(action, received: received.received, lineBytes: lineBytes,
                                                         session: &session, assembly: &assembly, client)
                        if !loggedIn, case .authenticated = session.state {
                            loggedIn = true
                            metrics.sessions.increment()
                            isConcurrent = asksConcurrency
                        }
                        client.heldSave.requestFinished()
                        client.idle?.requestFinished()
                        if !keepOpen || tracker.isShuttingDown { break }
                    }
                    // The connection's last answers are written before it closes.
                    try await running.waitForAll()
                }
                session.connectionClosed()
    }

    /// Whether `request` of a concurrent connection runs beside the others: the ordinary calls. Saves in
    /// parts (the connection holds them in order), subscriptions (their events start after the answer)
    /// and schema work (the connection's schema versions) run alone, in order.
    private static func runsAlongside(_ request: Request) -> Bool {
        guard request.part == nil else { return false }
        switch request.operation {
        case .fetch, .fetchTable, .count, .ids, .save, .history, .share, .unshare, .shares, .ping:
            return true
        case .hello, .register, .migrate, .deleteHistory, .subscribe, .unsubscribe, .bye:
            return false
        }
    }

    /// Performs `action` for the line of `lineBytes` read at `received`; returns whether the connection
    /// stays open.
    private func perform(_ action: SessionStateMachine.Action, received: NIODeadline, lineBytes: Int,
                         session: inout SessionStateMachine, assembly: inout SaveAssembly,
                         _ client: Client) async throws -> Bool {
        let subscriptions = client.subscriptions
        let logger = client.logger
        switch action {
        case .respond(let response):
            try await write(response, to: client)
            return true
        case .respondAndClose(let response):
            try await write(response, to: client)
            return false
        case .ignore:
            return session.state != .closed
        case .execute(let request, let user) where request.operation.name == .subscribe:
            guard case .subscribe(let entities) = request.operation else { return true }
            let requester = Requester.user(AuthenticatedUser(id: user.id, name: user.name, isAdmin: user.isAdmin))
            await subscriptions.listen(as: requester)   // once per connection: later calls return at once
            switch subscriptions.subscribe(id: request.id, entities: entities) {
            case .success:
                try await write(Response(id: request.id, .subscribed(request.id)), to: client)
                subscriptions.activate(id: request.id)
            case .failure(let error):
                try await write(Response(id: request.id, error: error), to: client)
            }
            return true
        case .execute(let request, _) where request.operation.name == .unsubscribe:
            guard case .unsubscribe(let subscription) = request.operation else { return true }
            let result = await subscriptions.unsubscribe(id: subscription)
            try await write(Response(id: request.id, result: result.map { ResponseResult.acknowledged }), to: client)
            return true
        case .execute(let request, let user) where request.part != nil:
            guard case .save(let save) = request.operation, let part = request.part else { return true }
            let heldSaves = heldSaves
            let action = assembly.receive(save, part: part, bytes: lineBytes, reserve: { heldSaves.reserve($0, for: user.id) })
            if assembly.isHolding { client.heldSave.partHeld(expiry: assembly.expiry) } else { client.heldSave.saveEnded() }
            switch action {
            case .held(let parts):
                try await write(Response(id: request.id, .held(parts)), to: client)
            case .refuse(let error, let releasing):
                heldSaves.release(releasing, for: user.id)
                if error.code == .saveTooLarge || error.code == .timeout {
                    logger.notice("save in parts refused", metadata: ["id": "\(LogText("\(request.id)"))", "reason": "\(LogText(error.message))"])
                }
                try await write(Response(id: request.id, error: error), to: client)
            case .run(let whole, let releasing):
                var joined = request
                joined.operation = .save(whole)
                joined.part = nil
                let response = await execute(joined, as: user, received: received, client)
                heldSaves.release(releasing, for: user.id)
                try await write(response, to: client)
            }
            return true
        case .execute(let request, let user):
            try await write(await execute(request, as: user, received: received, client), to: client)
            return true
        case .authenticate(let id, let hello):
            client.login.helloReceived()
            let outcome: Result<SessionUser, WireError>
            let refusal = loginGuard.refusal(user: hello.user, address: client.address)
            let throttled = refusal != nil
            if let refusal {
                logger.notice("login throttled", metadata: ["user": "\(LogText(hello.user))"])
                outcome = .failure(refusal)
            } else if !loginAdmission.enter() {
                // Checked by nobody and held against nobody: the client pauses and says hello again.
                metrics.recordLogin(.failure(LoginAdmission.busy), throttled: false)
                let next = session.authenticationNotChecked(id: id, error: LoginAdmission.busy)
                let keepOpen = try await perform(next, received: received, lineBytes: lineBytes, session: &session,
                                                 assembly: &assembly, client)
                client.login.helloDeferred()
                return keepOpen
            } else {
                defer { loginAdmission.leave() }
                // A change of the user that rings while the password is checked is caught by comparing this.
                let hintsBefore = sessions.hintCount
                // bcrypt's work is the database's, but the login's connection may be a new one: off the loop.
                outcome = await RequestWeight.run(heavy: client.executor != nil) { await dispatcher.authenticate(hello) }
                loginGuard.record(outcome, user: hello.user, address: client.address)
                if case .success(let user) = outcome {
                    let revocation = client.revocation
                    await sessions.register(
                        RecordedSession(id: client.sessionID, userID: user.id, clientAddress: client.address, tls: isTLS),
                        epoch: user.sessionEpoch, hintsBeforeLogin: hintsBefore, revoke: { revocation.revoke($0) })
                }
            }
            metrics.recordLogin(outcome, throttled: throttled)
            let next: SessionStateMachine.Action
            switch outcome {
            case .success(let user): next = session.authenticationSucceeded(id: id, user: user)
            case .failure(let error): next = session.authenticationFailed(id: id, error: error)
            }
            let keepOpen = try await perform(next, received: received, lineBytes: lineBytes, session: &session,
                                             assembly: &assembly, client)
            let succeeded = if case .success = outcome { true } else { false }
            return await client.login.helloChecked(succeeded: succeeded) && keepOpen
        }
    }

    /// Runs a logged-in request: on the connection's event loop when it is short, else on the global
    /// executor (``RequestWeight``).
    private func execute(_ request: Request, as user: SessionUser, received: NIODeadline, _ client: Client) async -> Response {
        let requestID = client.requestIDs.next()
        let started = ContinuousClock.now
        let response = await dispatcher.traced(request, requestID: requestID) {
            await executeUncounted(request, as: user, requestID: requestID, received: received, client)
        }
        metrics.recordRequest(request.operation.name, since: started, response: response)
        return response
    }

    private func executeUncounted(_ request: Request, as user: SessionUser, requestID: ServerRequestID, received: NIODeadline, _ client: Client) async -> Response {
        let namesShares = ShareProbeGuard.namesShares(request.operation)
        if namesShares, let refusal = shareProbes.refusal(user: user.name, address: client.address) {
            return refused(request, refusal, requestID: requestID, user: user, client)
        }
        let writesValues = TakenValueProbeGuard.writesValues(request.operation)
        if writesValues, let refusal = takenValueProbes.refusal(user: user.name, address: client.address) {
            return refused(request, refusal, requestID: requestID, user: user, client)
        }
        let heavy = client.executor != nil && RequestWeight.isHeavy(request.operation)
        let response = await RequestWeight.run(heavy: heavy) {
            await dispatcher.execute(request, as: user, versions: client.schemaVersions, commitPosition: client.commitPosition, received: received,
                                     executor: heavy ? nil : client.executor, requestID: requestID)
        }
        if namesShares { shareProbes.record(response, of: request.operation, user: user.name, address: client.address) }
        if writesValues { takenValueProbes.record(response, of: request.operation, user: user.name, address: client.address) }
        return response
    }

    /// A request the throttles refuse before it reaches the dispatcher: its answer and access line.
    private func refused(_ request: Request, _ refusal: WireError, requestID: ServerRequestID, user: SessionUser, _ client: Client) -> Response {
        var refusal = refusal
        refusal.requestID = requestID.description
        if client.logger.logLevel <= .info {
            client.logger.info("request", metadata: RequestLog.metadata(requestID: requestID, clientID: request.id, user: user.name,
                                                                        operation: request.operation.name, code: refusal.code.rawValue, elapsed: nil))
        }
        return Response(id: request.id, error: refusal)
    }

    private func write(_ response: Response, to client: Client) async throws {
        var response = response
        // Every error answer names its request, so a user's report finds the server's line: answers the
        // dispatcher gave carry their id already; the rest (a line that is no request, a refusal of the
        // session) get one here, and their own access line.
        if case .failure(var error) = response.result, error.requestID == nil {
            let requestID = client.requestIDs.next()
            error.requestID = requestID.description
            response.result = .failure(error)
            if client.logger.logLevel <= .info {
                client.logger.info("request", metadata: RequestLog.metadata(requestID: requestID, clientID: response.id, user: nil, operation: nil,
                                                                            code: error.code.rawValue, elapsed: nil))
            }
        }
        let line: ByteBuffer
        do {
            line = try await RequestWeight.run(heavy: RequestWeight.isHeavy(response)) { try response.encodedLineBuffer() }
        } catch {
            // Only values JSON cannot carry (NaN, infinity) get here; the client still gets its one answer.
            logger.warning("response could not be encoded", metadata: ["id": "\(LogText(response.id?.description ?? "null"))"])
            let fallback = Response(
                id: response.id,
                error: WireError(.typeMismatch, "the result contains a value JSON cannot carry (NaN or infinity)"))
            line = (try? fallback.encodedLineBuffer())
                ?? ByteBuffer(bytes: Data(#"{"id":null,"ok":false,"error":{"code":"internal_error","message":"encoding failed"}}"#.utf8 + [0x0A]))
        }
        guard line.readableBytes <= maxResponseBytes else {
            logger.notice("response too large", metadata: ["id": "\(LogText(response.id?.description ?? "null"))", "bytes": "\(line.readableBytes)"])
            let refusal = Response(id: response.id, error: WireError(
                .resultTooLarge, "the answer would be \(line.readableBytes) bytes, over the server's limit of \(maxResponseBytes); page with 'limit' and 'offset'"))
            try await client.outbound.write(try refusal.encodedLineBuffer())
            return
        }
        try await client.write(line)
    }

    private func refuse(_ connection: NIOAsyncChannel<ReceivedFrame, ByteBuffer>, _ error: WireError) async {
        try? await connection.executeThenClose { _, outbound in
            if let line = try? Response(id: nil, error: error).encodedLine() {
                try await outbound.write(ByteBuffer(bytes: line))
            }
        }
    }
}
