import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelWire
import Tracing

/// The store of a container opened on `pgmodel://user:password@host:port`: every call is a request on
/// the line protocol to a `pgmodel serve` process, which runs it on PostgreSQL as that user.
///
/// One TCP connection, opened on first use and logged in with `hello`. Concurrent calls are pipelined
/// and matched to their responses by id. If the connection breaks, calls in flight fail with
/// `connection_failed` (a save may or may not have committed) and the next call reconnects, logs in
/// again and re-registers the schemas prepared so far. Server errors arrive as ``PGModelError`` with
/// the server's code and message. Streams of ``changeSignals()`` subscribe on the same connection and,
/// unlike calls, reconnect by themselves (with backoff) after a drop.
///
/// Like the direct store it keeps its state behind a lock rather than in an actor, so its calls run
/// wherever the caller's task runs — on the container's event loop when called through
/// ``BlockingBridge`` — and never need Swift's cooperative pool, which blocked callers may occupy.
///
/// ```swift
/// let store = try RemoteModelStore(url: URL(string: "pgmodel://alice:secret@127.0.0.1:7432")!)
/// try await store.prepare(schema)
/// let trips = try await store.fetch(FetchRequest(entity: "Trip", limit: 10))
/// await store.close()
/// ```
@_spi(PGModelInternals) public final class RemoteModelStore: ModelStore {
    private struct State {
        var connection = RemoteConnectionStateMachine<ChannelBox>()
        /// Calls waiting for the connection another call is opening.
        var waiting: [Int: CheckedContinuation<any Channel, any Error>] = [:]
        /// Outcomes that came before their call stored its continuation.
        var early: [Int: Result<any Channel, any Error>] = [:]

        /// The continuation to resume with `outcome` now, or nil when the call has not started waiting
        /// (it finds `outcome` when it does).
        mutating func deliver(_ outcome: Result<any Channel, any Error>, to id: Int) -> CheckedContinuation<any Channel, any Error>? {
            if let continuation = waiting.removeValue(forKey: id) { return continuation }
            early[id] = outcome
            return nil
        }
        var hello: HelloResult?
        var nextRequestID: Int64 = 1
        /// The newest commit position this store's saves reported: sent with every read (`readAfter`),
        /// on whichever connection, so a server with read replicas shows the saves on a standby only
        /// once it has them.
        var lastCommit: LogSequenceNumber?
        var nextWaiterID = 1
    }

    /// Where the store connects and as whom.
    public let endpoint: Endpoint
    /// The longest response line accepted; fetch results can be far longer than requests.
    public let maxResponseLineBytes: Int
    /// The deadline of each call. Past it the call throws `timeout` and the connection is closed (a
    /// connection that stalled is not reused); the next call opens a new one.
    let requestTimeout: TimeAmount
    let eventLoop: any EventLoop
    let logger: Logger
    /// Where calls' spans go; nil when tracing is off (``activeTracer(_:)``).
    let tracer: (any Tracer)?
    /// The client side of TLS when the URL asks for it (`pgmodels://`, `tls=true`); nil for plain TCP.
    let tlsContext: NIOSSLContext?
    private let state = NIOLockedValueBox(State())
    /// The streams of ``changeSignals()`` and where their events come from.
    let signalHub = SignalHub()

    /// A store for `url` (`pgmodel://user:password@host:port`, port 7432 by default). Nothing connects
    /// until the first call. Throws `invalid_configuration` for a URL it cannot use.
    ///
    /// `tracer` gets a span (kind `client`) per call, whose context each request carries to the server
    /// (`traceparent`); nil is the process's tracer (`InstrumentationSystem.tracer`), read now.
    ///
    /// ```swift
    /// let store = try RemoteModelStore(url: URL(string: "pgmodel://alice:secret@localhost")!)
    /// ```
    public init(
        url: URL,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        maxResponseLineBytes: Int = 256 << 20,
        requestTimeout: TimeAmount = .seconds(30),
        logger: Logger = Logger(label: "pgmodel.remote"),
        tracer: (any Tracer)? = nil
    ) throws {
        self.tracer = Self.activeTracer(tracer)
        self.endpoint = try Endpoint(url: url)
        self.tlsContext = try endpoint.tls?.makeContext()
        self.requestTimeout = requestTimeout
        self.eventLoop = eventLoopGroup.next()
        self.maxResponseLineBytes = max(1024, maxResponseLineBytes)
        self.logger = logger
    }

    deinit {
        if case .connected(let box) = state.withLockedValue({ $0.connection.state }) {
            box.channel.close(promise: nil)
        }
    }

    // MARK: ModelStore

    /// Asks the server to migrate the store to `schema` through `plan` (`migrate`): admins only, and only
    /// through lightweight stages; custom stages run on the direct store.
    package func migrate(to schema: SchemaDescription, plan: MigrationPlanDescription) async throws {
        _ = try await call(.migrate(schema, plan), timeout: ConnectionDeadline.schemaTimeout(for: requestTimeout))
    }

    /// Registers `schema` with the server (`register`), which creates or extends its tables.
    public func prepare(_ schema: SchemaDescription) async throws {
        // Creating tables and indexes may take longer than a request.
        _ = try await call(.register(schema), timeout: ConnectionDeadline.schemaTimeout(for: requestTimeout))
        state.withLockedValue { $0.connection.prepared(schema) }
    }

    public func fetch(_ request: FetchRequest) async throws -> [FetchedRow] {
        guard case .rows(let rows) = try await call(.fetch(request)) else { throw Self.unexpectedResult(.fetch) }
        return rows
    }

    /// The rows of `request` as a `table` answer (`"format":"table"`): names once, values by position.
    /// A server older than that format ignores the field and answers `rows`, which are converted.
    public func fetchTable(_ request: FetchRequest) async throws -> FetchedTable {
        switch try await call(.fetchTable(request)) {
        case .table(let table): return table
        case .rows(let rows): return FetchedTable(rows: rows)
        default: throw Self.unexpectedResult(.fetch)
        }
    }

    public func count(_ request: FetchRequest) async throws -> Int {
        guard case .count(let count) = try await call(.count(request)) else { throw Self.unexpectedResult(.count) }
        return count
    }

    public func fetchIdentifiers(_ request: FetchRequest) async throws -> [RowReference] {
        guard case .ids(let ids) = try await call(.ids(request)) else { throw Self.unexpectedResult(.ids) }
        return ids
    }

    /// Sends `request` as one `save` line, or, when that line would pass the server's request-line limit
    /// (its `hello` says which), as a save in parts written back to back, which the server runs as one
    /// transaction when the last part arrives (PROTOCOL.md §4, A save in parts).
    ///
    /// A save that names no process goes as this process's (``ProcessIdentity``): the server records it
    /// as this client's word, shown qualified by the user's name to every other reader.
    public func save(_ request: SaveRequest) async throws -> SaveResult {
        guard tracer != nil else { return try await untracedSave(request) }
        return try await traced(.save(SaveRequest())) { try await untracedSave(request) }
    }

    /// The newest commit position this store's saves reported, which its reads carry (`readAfter`):
    /// a new store taking over from this one (another process, after a restart) may start from it with
    /// ``readAfter(atLeast:)``.
    ///
    /// ```swift
    /// let position = store.readAfter   // keep it; later: newStore.readAfter(atLeast: position)
    /// ```
    public var readAfter: LogSequenceNumber? { state.withLockedValue { $0.lastCommit } }

    /// Makes this store's reads wait for at least `position` (a commit another store of the same user
    /// reported), as if it had saved it.
    ///
    /// ```swift
    /// store.readAfter(atLeast: LogSequenceNumber("0/16B3748"))
    /// ```
    public func readAfter(atLeast position: LogSequenceNumber?) {
        guard let position else { return }
        state.withLockedValue { $0.lastCommit = LogSequenceNumber.latest($0.lastCommit, position) }
    }

    private func untracedSave(_ request: SaveRequest) async throws -> SaveResult {
        let result = try await sendSave(request)
        readAfter(atLeast: result.commitLSN)
        return result
    }

    private func sendSave(_ request: SaveRequest) async throws -> SaveResult {
        var request = request
        if request.bundleIdentifier == nil, request.processIdentifier == nil {
            request.bundleIdentifier = ProcessIdentity.bundleIdentifier
            request.processIdentifier = ProcessIdentity.processIdentifier
        }
        let channel = try await connectedChannel()
        let lines = try saveLines(for: request)
        do {
            return try await send(lines, on: channel)
        } catch is RequestNotRun {
            // As in `call`: nothing of it ran, so it goes once more on a new connection, cut anew by that
            // connection's hello: the server behind it may have other limits, or take no parts at all.
            state.withLockedValue { $0.connection.channelClosed(ChannelBox(channel)) }
            channel.close(promise: nil)
            let fresh = try await connectedChannel()
            do {
                return try await send(try saveLines(for: request), on: fresh)
            } catch let notRun as RequestNotRun {
                throw notRun.error
            }
        }
    }

    /// `request`'s lines as the current connection's server takes them (one line, or parts).
    private func saveLines(for request: SaveRequest) throws -> [SaveParts.Line] {
        let hello = state.withLockedValue { $0.hello }
        let (traceParent, traceState) = tracer == nil ? (nil, nil) : traceFields()
        return try SaveParts.lines(for: request, timeout: .nanoseconds(requestTimeout.nanoseconds),
                                   maxLineBytes: hello?.maxLineBytes ?? WireProtocol.defaultMaxLineBytes,
                                   maxSaveBytes: hello?.maxSaveBytes, traceParent: traceParent, traceState: traceState,
                                   makeID: makeRequestID)
    }

    /// Writes a save's lines back to back in one trip to the event loop (no other request of this store
    /// comes between them) and returns the last one's result. The first error among the answers is
    /// thrown: a refused part drops the save on the server, so the later parts' errors only echo it.
    private func send(_ lines: [SaveParts.Line], on channel: any Channel) async throws -> SaveResult {
        let promises = lines.map { _ in channel.eventLoop.makePromise(of: Response.self) }
        let (endpoint, timeout) = (endpoint, requestTimeout)
        let pending = zip(lines, promises).map { PendingRequest(id: $0.id, line: ByteBuffer(bytes: $0.bytes), promise: $1) }
        let send: @Sendable () -> Void = {
            let timer = channel.eventLoop.scheduleTask(in: timeout) {
                let error = PGModelError(.timeout,
                    "'save' got no answer from \(endpoint) within \(ConnectionDeadline.describe(timeout)); the connection was closed")
                for promise in promises { promise.fail(error) }
                channel.close(promise: nil)
            }
            promises.last?.futureResult.whenComplete { _ in timer.cancel() }
            for request in pending {
                channel.write(request).whenFailure { _ in
                    request.promise.fail(RequestNotRun(error: PGModelError(.connectionFailed, "the connection to \(endpoint) is closed")))
                }
            }
            channel.flush()
        }
        if channel.eventLoop.inEventLoop { send() } else { channel.eventLoop.execute(send) }
        var result: SaveResult?
        for (index, promise) in promises.enumerated() {
            let response = try await promise.futureResult.get()
            switch try Self.result(of: response, for: .save(SaveRequest())) {
            case .saved(let saved) where index == promises.count - 1: result = saved
            case .held where index < promises.count - 1: continue
            default: throw Self.unexpectedResult(.save)
            }
        }
        guard let result else { throw Self.unexpectedResult(.save) }
        return result
    }

    /// Says `bye` and closes the connection. Later calls throw `connection_failed`.
    public func close() async {
        signalHub.close()
        let (channel, waiters) = state.withLockedValue { state -> ((any Channel)?, [CheckedContinuation<any Channel, any Error>]) in
            let (box, waiterIDs) = state.connection.close()
            return (box?.channel, waiterIDs.compactMap { state.deliver(.failure(closedError), to: $0) })
        }
        for waiter in waiters { waiter.resume(throwing: closedError) }
        guard let channel else { return }
        // A polite goodbye, but a silent server gets a second at most: the socket closes either way,
        // and closing fails the waiting `bye`.
        let goodbye = roundTrip(.bye, on: channel)
        let deadline = channel.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
        _ = try? await goodbye.get()
        deadline.cancel()
        try? await channel.close()
    }

    // MARK: Beyond ModelStore

    /// Connects and logs in if not connected yet; returns what the server said to `hello`.
    ///
    /// ```swift
    /// let hello = try await store.connect()
    /// print(hello.server)   // pgmodel/0.1
    /// ```
    @discardableResult
    public func connect() async throws -> HelloResult {
        _ = try await connectedChannel()
        guard let hello = state.withLockedValue({ $0.hello }) else {
            throw PGModelError(.connectionFailed, "the connection to \(endpoint) closed during login")
        }
        return hello
    }

    /// Who the last successful `hello` logged in, or nil before one.
    ///
    /// ```swift
    /// print(store.loggedInUser?.name ?? "not connected")
    /// ```
    public var loggedInUser: (name: String, id: UUID, isAdmin: Bool)? {
        state.withLockedValue { $0.hello }.map { ($0.user, $0.userID, $0.isAdmin) }
    }

    /// The schema the service's tables live in, as the last successful `hello` named it; nil before
    /// one or from a server that does not say.
    ///
    /// ```swift
    /// print(store.storeName ?? "unknown")
    /// ```
    public var storeName: String? {
        state.withLockedValue { $0.hello?.store }
    }

    /// Checks that the server answers.
    ///
    /// ```swift
    /// try await store.ping()
    /// ```
    public func ping() async throws {
        _ = try await call(.ping)
    }

    // MARK: Requests

    /// Sends `operation` on the current connection (connecting first if needed) and returns its result;
    /// an error response throws the server's error.
    ///
    /// A request the server certainly did not run (the connection was closed, or the server announced
    /// it closes an idle connection just as the request went out) is sent once more on a new connection.
    func call(_ operation: Request.Operation, timeout: TimeAmount? = nil) async throws -> ResponseResult {
        guard tracer != nil else { return try await untracedCall(operation, timeout: timeout) }
        return try await traced(operation, rows: Self.returnedRows) { try await untracedCall(operation, timeout: timeout) }
    }

    /// ``call(_:timeout:)`` without its span.
    private func untracedCall(_ operation: Request.Operation, timeout: TimeAmount?) async throws -> ResponseResult {
        let channel = try await connectedChannel()
        do {
            return try Self.result(of: try await unmappedResponse(to: operation, on: channel, timeout: timeout), for: operation)
        } catch is RequestNotRun {
            // The server runs nothing more from that connection (its idle notice came, or it closed before
            // this side saw it). Forget it even while it still looks active, so the one retry opens a new
            // connection instead of writing to the same one again.
            state.withLockedValue { $0.connection.channelClosed(ChannelBox(channel)) }
            channel.close(promise: nil)
            let fresh = try await connectedChannel()
            return try Self.result(of: try await response(to: operation, on: fresh, timeout: timeout), for: operation)
        }
    }

    /// The server's line before it closes a connection (idle or login timeout): id null, code `timeout`.
    /// Answers to requests always carry their id.
    static func isClosingNotice(_ response: Response) -> Bool {
        guard response.id == nil, case .failure(let error) = response.result else { return false }
        return error.code == .timeout
    }

    /// Sends `operation` and waits for its response within ``requestTimeout``. Past it the connection
    /// is closed — its other calls fail with `connection_failed`, the next call reconnects — and this
    /// call throws `timeout`.
    func response(to operation: Request.Operation, id: RequestID? = nil, on channel: any Channel,
                  timeout: TimeAmount? = nil) async throws -> Response {
        do {
            return try await unmappedResponse(to: operation, id: id, on: channel, timeout: timeout)
        } catch let notRun as RequestNotRun {
            throw notRun.error
        }
    }

    /// ``response(to:id:on:timeout:)`` that throws ``RequestNotRun`` as itself, for callers that resend.
    private func unmappedResponse(to operation: Request.Operation, id: RequestID? = nil, on channel: any Channel,
                                  timeout: TimeAmount? = nil) async throws -> Response {
        let timeout = timeout ?? requestTimeout
        // The server learns the deadline too, so it neither starts nor commits the request after this
        // call has thrown `timeout`.
        let endpoint = endpoint
        let answer = roundTrip(operation, id: id, timeout: .nanoseconds(timeout.nanoseconds), on: channel) { answer in
            let timer = channel.eventLoop.scheduleTask(in: timeout) {
                // A promise completes once: if the answer came first, this failure is ignored.
                answer.fail(PGModelError(.timeout,
                    "'\(operation.name.rawValue)' got no answer from \(endpoint) within \(ConnectionDeadline.describe(timeout)); the connection was closed"))
                channel.close(promise: nil)
            }
            answer.futureResult.whenComplete { _ in timer.cancel() }
        }
        return try await answer.get()
    }

    /// A request id never used before by this store, on any connection.
    func makeRequestID() -> RequestID {
        RequestID.int(state.withLockedValue { state in
            defer { state.nextRequestID += 1 }
            return state.nextRequestID
        })
    }

    /// Writes one request (with `id`, or a new one, and the client's `timeout` for it) and returns the
    /// future of its response. `onLoop` runs on the channel's event loop just after the write (a
    /// deadline's timer): one trip to the loop for both, since each trip from another thread wakes it.
    func roundTrip(_ operation: Request.Operation, id: RequestID? = nil, timeout: Duration? = nil, on channel: any Channel,
                   onLoop: (@Sendable (EventLoopPromise<Response>) -> Void)? = nil) -> EventLoopFuture<Response> {
        let id = id ?? makeRequestID()
        let promise = channel.eventLoop.makePromise(of: Response.self)
        let line: ByteBuffer
        do {
            var request = Request(id: id, operation: operation, timeout: timeout)
            if tracer != nil { (request.traceParent, request.traceState) = traceFields() }
            switch operation {
            case .fetch, .fetchTable, .count, .ids, .history: request.readAfter = readAfter
            default: break
            }
            line = try request.encodedLineBuffer()
        } catch {
            promise.fail(PGModelError(.typeMismatch, "the request contains a value JSON cannot carry (NaN or infinity)"))
            return promise.futureResult
        }
        let pending = PendingRequest(id: id, line: line, promise: promise)
        let endpoint = endpoint
        let send: @Sendable () -> Void = {
            // If the channel is already closed the write never reaches the router; fail the promise here.
            channel.writeAndFlush(pending).whenFailure { _ in
                promise.fail(RequestNotRun(error: PGModelError(.connectionFailed, "the connection to \(endpoint) is closed")))
            }
            // After the write, while the server works: the answer is read on this loop only after this
            // closure returns, and arming a timer costs a few microseconds a point fetch would wait for.
            onLoop?(promise)
        }
        if channel.eventLoop.inEventLoop { send() } else { channel.eventLoop.execute(send) }
        return promise.futureResult
    }

    static func result(of response: Response, for operation: Request.Operation) throws -> ResponseResult {
        switch response.result {
        case .failure(let error):
            throw error.modelError
        case .success(let result):
            guard result.answers(operation.name) else { throw unexpectedResult(operation.name) }
            return result
        }
    }

    static func unexpectedResult(_ operation: Request.Operation.Name) -> PGModelError {
        PGModelError(.malformedMessage, "the server answered '\(operation.rawValue)' with a result of another operation")
    }

    // MARK: Connection

    /// The logged-in channel: the current one, the one being opened by a concurrent call, or a new one
    /// (``RemoteConnectionStateMachine`` decides).
    func connectedChannel() async throws -> any Channel {
        let (action, waiterID) = state.withLockedValue { state -> (RemoteConnectionStateMachine<ChannelBox>.ChannelAction, Int) in
            let id = state.nextWaiterID
            state.nextWaiterID += 1
            return (state.connection.requestChannel(waiterID: id) { $0.channel.isActive }, id)
        }
        switch action {
        case .use(let box):
            return box.channel
        case .closed:
            throw closedError
        case .wait:
            return try await withCheckedThrowingContinuation { continuation in
                let early = state.withLockedValue { state -> Result<any Channel, any Error>? in
                    if let outcome = state.early.removeValue(forKey: waiterID) { return outcome }
                    state.waiting[waiterID] = continuation
                    return nil
                }
                if let early { continuation.resume(with: early) }
            }
        case .open:
            do {
                let channel = try await openChannel()
                let box = ChannelBox(channel)
                // A channel that closes (server gone, a deadline) makes the next call reconnect.
                channel.closeFuture.whenComplete { [weak self] _ in
                    self?.state.withLockedValue { $0.connection.channelClosed(box) }
                }
                let (opened, waiters) = state.withLockedValue { state -> (RemoteConnectionStateMachine<ChannelBox>.OpenedAction, [CheckedContinuation<any Channel, any Error>]) in
                    let opened = state.connection.opened(box)
                    switch opened {
                    case .resume(let ids, _):
                        return (opened, ids.compactMap { state.deliver(.success(channel), to: $0) })
                    case .closeAndFail(let ids, _):
                        return (opened, ids.compactMap { state.deliver(.failure(closedError), to: $0) })
                    }
                }
                switch opened {
                case .resume:
                    for waiter in waiters { waiter.resume(returning: channel) }
                    return channel
                case .closeAndFail:
                    channel.close(promise: nil)
                    for waiter in waiters { waiter.resume(throwing: closedError) }
                    throw closedError
                }
            } catch {
                let waiters = state.withLockedValue { state in
                    state.connection.openFailed().compactMap { state.deliver(.failure(error), to: $0) }
                }
                for waiter in waiters { waiter.resume(throwing: error) }
                throw error
            }
        }
    }

    private var closedError: PGModelError { PGModelError(.connectionFailed, "the store for \(endpoint) is closed") }

    /// Connects, says `hello`, and re-registers the prepared schemas.
    private func openChannel() async throws -> any Channel {
        let peer = endpoint.description
        let maxLineBytes = maxResponseLineBytes
        // Weak: the channel must not keep a dropped store alive.
        let onEvent: @Sendable (Event) -> Void = { [weak signalHub] event in signalHub?.deliver(event) }
        let connectTimeout = min(.seconds(10), requestTimeout)
        let (tlsContext, host) = (self.tlsContext, endpoint.host)
        // Set by the initializer when TLS is on: completes with the handshake.
        let handshake = NIOLockedValueBox<EventLoopFuture<Void>?>(nil)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: eventLoop)
                .connectTimeout(connectTimeout)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let tlsContext {
                            let done = try Self.addTLSHandlers(context: tlsContext, host: host, timeout: connectTimeout, to: channel)
                            handshake.withLockedValue { $0 = done }
                        }
                        try channel.pipeline.syncOperations.addHandler(ResponseRouter(peer: peer, maxLineBytes: maxLineBytes, onEvent: onEvent))
                    }
                }
                .connect(host: endpoint.host, port: endpoint.port)
                .get()
        } catch {
            throw PGModelError(.connectionFailed, "cannot connect to \(endpoint): \(ConnectionFailureText.describe(error))")
        }
        if let done = handshake.withLockedValue({ $0 }) {
            do {
                try await done.get()
            } catch {
                channel.close(promise: nil)
                throw tlsError(error)
            }
        }
        do {
            // Every call awaits its own answer before anything that depends on it is sent, so the
            // server may run the calls of this connection side by side.
            let result = try await sayHello(on: channel)
            let schemas = state.withLockedValue { state in
                state.hello = result
                return state.connection.schemas
            }
            for schema in schemas {
                let timeout = ConnectionDeadline.schemaTimeout(for: requestTimeout)
                _ = try Self.result(of: try await response(to: .register(schema), on: channel, timeout: timeout), for: .register(schema))
            }
            logger.debug("connected", metadata: ["server": "\(endpoint)", "version": "\(result.server)"])
            return channel
        } catch {
            channel.close(promise: nil)
            throw error
        }
    }
}

extension RemoteModelStore {
    /// Logs `channel` in. A server busy with other logins (`server_busy`: nothing was checked) is asked
    /// again after a random pause that doubles each time, until the store's request timeout: a crowd of
    /// clients reconnecting together then spreads out instead of retrying in step.
    fileprivate func sayHello(on channel: any Channel) async throws -> HelloResult {
        let hello = HelloPayload(user: endpoint.user, password: endpoint.password, concurrent: true)
        let deadline = NIODeadline.now() + requestTimeout
        var pauseMilliseconds: Int64 = 50
        while true {
            let left = TimeAmount.nanoseconds(max(1_000_000, (deadline - .now()).nanoseconds))
            let greeting = try await response(to: .hello(hello), on: channel, timeout: left)
            do {
                guard case .hello(let result) = try Self.result(of: greeting, for: .hello(hello)) else {
                    throw Self.unexpectedResult(.hello)
                }
                return result
            } catch let error as PGModelError where error.code == .serverBusy {
                let wait = Int64.random(in: pauseMilliseconds / 2...pauseMilliseconds)
                guard NIODeadline.now() + .milliseconds(wait) < deadline else { throw error }
                try await Task.sleep(for: .milliseconds(wait))
                pauseMilliseconds = min(pauseMilliseconds * 2, 1_000)
            }
        }
    }
}

/// A channel as the connection state machine's token: compared by identity.
struct ChannelBox: Equatable, Sendable {
    let channel: any Channel
    init(_ channel: any Channel) { self.channel = channel }
    static func == (lhs: ChannelBox, rhs: ChannelBox) -> Bool { lhs.channel === rhs.channel }
}
