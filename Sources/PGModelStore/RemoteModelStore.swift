import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PGModelCore
import PGModelPostgres
import PGModelWire

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
public final class RemoteModelStore: ModelStore {
    private enum Connection {
        case idle
        case connecting(EventLoopFuture<any Channel>)
        case connected(any Channel)
        case closed
    }

    private struct State {
        var connection = Connection.idle
        /// Schemas prepared so far, re-registered after a reconnect.
        var schemas: [SchemaDescription] = []
        var hello: HelloResult?
        var nextRequestID: Int64 = 1
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
    private let state = NIOLockedValueBox(State())
    /// The streams of ``changeSignals()`` and where their events come from.
    let signalHub = SignalHub()

    /// A store for `url` (`pgmodel://user:password@host:port`, port 7432 by default). Nothing connects
    /// until the first call. Throws `invalid_configuration` for a URL it cannot use.
    ///
    /// ```swift
    /// let store = try RemoteModelStore(url: URL(string: "pgmodel://alice:secret@localhost")!)
    /// ```
    public init(
        url: URL,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        maxResponseLineBytes: Int = 256 << 20,
        requestTimeout: TimeAmount = .seconds(30),
        logger: Logger = Logger(label: "pgmodel.remote")
    ) throws {
        self.endpoint = try Endpoint(url: url)
        self.requestTimeout = requestTimeout
        self.eventLoop = eventLoopGroup.next()
        self.maxResponseLineBytes = max(1024, maxResponseLineBytes)
        self.logger = logger
    }

    deinit {
        if case .connected(let channel) = state.withLockedValue({ $0.connection }) {
            channel.close(promise: nil)
        }
    }

    // MARK: ModelStore

    /// Registers `schema` with the server (`register`), which creates or extends its tables.
    public func prepare(_ schema: SchemaDescription) async throws {
        // Creating tables and indexes may take longer than a request.
        _ = try await call(.register(schema), timeout: ConnectionDeadline.schemaTimeout(for: requestTimeout))
        state.withLockedValue { state in
            if !state.schemas.contains(schema) { state.schemas.append(schema) }
        }
    }

    public func fetch(_ request: FetchRequest) async throws -> [FetchedRow] {
        guard case .rows(let rows) = try await call(.fetch(request)) else { throw Self.unexpectedResult(.fetch) }
        return rows
    }

    public func count(_ request: FetchRequest) async throws -> Int {
        guard case .count(let count) = try await call(.count(request)) else { throw Self.unexpectedResult(.count) }
        return count
    }

    public func fetchIdentifiers(_ request: FetchRequest) async throws -> [RowReference] {
        guard case .ids(let ids) = try await call(.ids(request)) else { throw Self.unexpectedResult(.ids) }
        return ids
    }

    public func save(_ request: SaveRequest) async throws -> SaveResult {
        guard case .saved(let result) = try await call(.save(request)) else { throw Self.unexpectedResult(.save) }
        return result
    }

    /// Says `bye` and closes the connection. Later calls throw `connection_failed`.
    public func close() async {
        signalHub.close()
        let channel = state.withLockedValue { state -> (any Channel)? in
            defer { state.connection = .closed }
            if case .connected(let channel) = state.connection { return channel }
            return nil
        }
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
    func call(_ operation: Request.Operation, timeout: TimeAmount? = nil) async throws -> ResponseResult {
        let channel = try await connectedChannel()
        return try Self.result(of: try await response(to: operation, on: channel, timeout: timeout), for: operation)
    }

    /// Sends `operation` and waits for its response within ``requestTimeout``. Past it the connection
    /// is closed — its other calls fail with `connection_failed`, the next call reconnects — and this
    /// call throws `timeout`.
    func response(to operation: Request.Operation, id: RequestID? = nil, on channel: any Channel,
                  timeout: TimeAmount? = nil) async throws -> Response {
        let answer = roundTrip(operation, id: id, on: channel)
        let deadline = channel.eventLoop.makePromise(of: Response.self)
        let timeout = timeout ?? requestTimeout
        let timer = channel.eventLoop.scheduleTask(in: timeout) { [endpoint] in
            // A promise completes once: if the answer comes first, this failure is ignored.
            deadline.fail(PGModelError(.timeout,
                "'\(operation.name.rawValue)' got no answer from \(endpoint) within \(ConnectionDeadline.describe(timeout)); the connection was closed"))
            channel.close(promise: nil)
        }
        answer.whenComplete { result in
            timer.cancel()
            deadline.completeWith(result)
        }
        return try await deadline.futureResult.get()
    }

    /// A request id never used before by this store, on any connection.
    func makeRequestID() -> RequestID {
        RequestID.int(state.withLockedValue { state in
            defer { state.nextRequestID += 1 }
            return state.nextRequestID
        })
    }

    /// Writes one request (with `id`, or a new one) and returns the future of its response.
    func roundTrip(_ operation: Request.Operation, id: RequestID? = nil, on channel: any Channel) -> EventLoopFuture<Response> {
        let id = id ?? makeRequestID()
        let promise = channel.eventLoop.makePromise(of: Response.self)
        let line: Data
        do {
            line = try Request(id: id, operation: operation).encodedLine()
        } catch {
            promise.fail(PGModelError(.typeMismatch, "the request contains a value JSON cannot carry (NaN or infinity)"))
            return promise.futureResult
        }
        let pending = PendingRequest(id: id, line: ByteBuffer(bytes: line), promise: promise)
        // If the channel is already closed the write never reaches the router; fail the promise here.
        channel.writeAndFlush(pending).whenFailure { [endpoint] _ in
            promise.fail(PGModelError(.connectionFailed, "the connection to \(endpoint) is closed"))
        }
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

    /// The logged-in channel: the current one, the one being opened by a concurrent call, or a new one.
    func connectedChannel() async throws -> any Channel {
        enum Next {
            case use(any Channel)
            case wait(EventLoopFuture<any Channel>)
            case open(EventLoopPromise<any Channel>)
            case closed
        }
        let next = state.withLockedValue { state -> Next in
            switch state.connection {
            case .closed:
                return .closed
            case .connected(let channel) where channel.isActive:
                return .use(channel)
            case .connecting(let future):
                return .wait(future)
            case .idle, .connected:
                let promise = eventLoop.makePromise(of: (any Channel).self)
                state.connection = .connecting(promise.futureResult)
                return .open(promise)
            }
        }
        switch next {
        case .use(let channel):
            return channel
        case .wait(let future):
            return try await future.get()
        case .closed:
            throw PGModelError(.connectionFailed, "the store for \(endpoint) is closed")
        case .open(let promise):
            do {
                let channel = try await openChannel()
                let wasClosed = state.withLockedValue { state -> Bool in
                    if case .closed = state.connection { return true }
                    state.connection = .connected(channel)
                    return false
                }
                if wasClosed {
                    channel.close(promise: nil)
                    throw PGModelError(.connectionFailed, "the store for \(endpoint) is closed")
                }
                promise.succeed(channel)
                return channel
            } catch {
                state.withLockedValue { state in
                    if case .connecting = state.connection { state.connection = .idle }
                }
                promise.fail(error)
                throw error
            }
        }
    }

    /// Connects, says `hello`, and re-registers the prepared schemas.
    private func openChannel() async throws -> any Channel {
        let peer = endpoint.description
        let maxLineBytes = maxResponseLineBytes
        // Weak: the channel must not keep a dropped store alive.
        let onEvent: @Sendable (Event) -> Void = { [weak signalHub] event in signalHub?.deliver(event) }
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: eventLoop)
                .connectTimeout(min(.seconds(10), requestTimeout))
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            ByteToMessageHandler(LineFrameDecoder(maxLineBytes: maxLineBytes)))
                        try channel.pipeline.syncOperations.addHandler(ResponseRouter(peer: peer, onEvent: onEvent))
                    }
                }
                .connect(host: endpoint.host, port: endpoint.port)
                .get()
        } catch {
            throw PGModelError(.connectionFailed, "cannot connect to \(endpoint): \(error)")
        }
        do {
            let hello = HelloPayload(user: endpoint.user, password: endpoint.password)
            let greeting = try await response(to: .hello(hello), on: channel)
            guard case .hello(let result) = try Self.result(of: greeting, for: .hello(hello)) else {
                throw Self.unexpectedResult(.hello)
            }
            let schemas = state.withLockedValue { state in
                state.hello = result
                return state.schemas
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
