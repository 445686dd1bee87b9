@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelWire

/// The life of one connection, without sockets: unauthenticated → authenticated(user) → closed.
/// For every parsed line it decides whether to answer at once, check credentials, run the request, or
/// close; the server performs the decided action and reports back authentication outcomes.
///
/// Requests are fed one at a time, in arrival order, each after the previous one's action finished;
/// that is what makes a pipelined `hello` followed by a `fetch` work.
///
/// ```swift
/// var session = SessionStateMachine()
/// switch session.receive(Request.decode(line: line)) {
/// case .respond(let response): write(response)
/// case .authenticate(let id, let hello): …; write(session.authenticationSucceeded(id: id, user: user))
/// case .execute(let request, let user): write(await run(request, as: user))
/// case .respondAndClose(let response): write(response); close()
/// case .ignore: break
/// }
/// ```
@_spi(PGModelInternals) public struct SessionStateMachine: Sendable {
    /// Where the connection is.
    public enum State: Hashable, Sendable {
        /// Before a successful `hello`; only `hello`, `ping` and `bye` are accepted.
        case unauthenticated
        /// A `hello` is being checked.
        case authenticating
        /// Logged in.
        case authenticated(SessionUser)
        /// `bye`, too many failed logins, or the peer went away: nothing more is answered.
        case closed
    }

    /// What the server should do with a line.
    public enum Action: Hashable, Sendable {
        /// Write this response; the connection stays open.
        case respond(Response)
        /// Check `hello`'s credentials, then call ``authenticationSucceeded(id:user:)`` or
        /// ``authenticationFailed(id:error:)`` and perform the action it returns.
        case authenticate(id: RequestID, hello: HelloPayload)
        /// Run the request as `user` and write its response.
        case execute(Request, user: SessionUser)
        /// Write this response, then close the connection.
        case respondAndClose(Response)
        /// Write nothing: the session is closed.
        case ignore
    }

    /// The current state.
    public private(set) var state: State = .unauthenticated
    /// After this many failed `hello`s the connection is closed, which slows down password guessing.
    public let maxFailedAuthentications: Int
    private var failedAuthentications = 0

    /// The request-line limit a successful `hello` reports (``HelloResult/maxLineBytes``).
    public let maxLineBytes: Int?
    /// The limit of one save in parts a successful `hello` reports (``HelloResult/maxSaveBytes``).
    public let maxSaveBytes: Int?

    /// The schema a successful `hello` names as the store (``HelloResult/store``).
    public let storeName: String?

    public init(maxFailedAuthentications: Int = 5, maxLineBytes: Int? = nil, maxSaveBytes: Int? = nil,
                storeName: String? = nil) {
        self.storeName = storeName
        self.maxFailedAuthentications = max(1, maxFailedAuthentications)
        self.maxLineBytes = maxLineBytes
        self.maxSaveBytes = maxSaveBytes
    }

    /// Decides what to do with a parsed line (see ``Request/decode(line:)-(Data)``).
    public mutating func receive(_ parsed: Result<Request, RequestDecodingFailure>) -> Action {
        if case .closed = state { return .ignore }
        switch parsed {
        case .failure(let failure):
            return .respond(Response(id: failure.id, error: failure.error))
        case .success(let request):
            return receive(request)
        }
    }

    /// Decides what to do with a request.
    public mutating func receive(_ request: Request) -> Action {
        switch (state, request.operation) {
        case (.closed, _):
            return .ignore
        case (_, .ping):
            return .respond(Response(id: request.id, .pong))
        case (_, .bye):
            state = .closed
            return .respondAndClose(Response(id: request.id, .acknowledged))
        case (.authenticating, _):
            // The server feeds one request at a time, so this is a server bug rather than a client error.
            return .respond(Response(
                id: request.id, error: WireError(.internalError, "a login is still being checked on this connection")))
        case (.authenticated(let user), .hello):
            return .respond(Response(
                id: request.id,
                error: WireError(
                    .alreadyAuthenticated,
                    "this connection is already logged in as '\(user.name)'; open another connection to log in as someone else")))
        case (.unauthenticated, .hello(let hello)):
            guard hello.protocolVersion == WireProtocol.version else {
                return .respond(Response(
                    id: request.id,
                    error: WireError(
                        .unsupportedProtocol,
                        "protocol \(hello.protocolVersion) is not supported; this server speaks \(WireProtocol.version)",
                        field: "protocol")))
            }
            // Bounded before they reach the throttle (whose keys they are), the logs or the database.
            guard !hello.user.isEmpty, hello.user.count <= WireProtocol.maxUserNameCharacters,
                  hello.user.utf8.count <= 4 * WireProtocol.maxUserNameCharacters else {
                return .respond(Response(id: request.id, error: WireError(
                    .invalidField, "a user name has 1 to \(WireProtocol.maxUserNameCharacters) characters", field: "user")))
            }
            guard hello.password.utf8.count <= WireProtocol.maxPasswordBytes else {
                return .respond(Response(id: request.id, error: WireError(
                    .invalidField, "a password has at most \(WireProtocol.maxPasswordBytes) bytes", field: "password")))
            }
            state = .authenticating
            return .authenticate(id: request.id, hello: hello)
        case (.unauthenticated, _):
            return .respond(Response(
                id: request.id,
                error: WireError(.notAuthenticated, "log in with 'hello' before '\(request.operation.name.rawValue)'")))
        case (.authenticated(let user), _):
            return .execute(request, user: user)
        }
    }

    /// Decides what to do about a line longer than the limit: an error with a `null` id (the line was never parsed).
    public mutating func receiveOversizedLine(limit: Int) -> Action {
        if case .closed = state { return .ignore }
        return .respond(Response(
            id: nil, error: WireError(.lineTooLong, "line longer than \(limit) bytes; skipped up to the next newline")))
    }

    /// The credentials of `hello` `id` were right: the connection is now `user`'s.
    public mutating func authenticationSucceeded(id: RequestID, user: SessionUser) -> Action {
        guard case .authenticating = state else { return .ignore }
        state = .authenticated(user)
        failedAuthentications = 0
        return .respond(Response(id: id, .hello(HelloResult(user: user.name, userID: user.id, isAdmin: user.isAdmin,
                                                            maxLineBytes: maxLineBytes, maxSaveBytes: maxSaveBytes,
                                                            store: storeName))))
    }

    /// The credentials of `hello` `id` were wrong (or could not be checked): answer `error`; after
    /// ``maxFailedAuthentications`` failures, close.
    public mutating func authenticationFailed(id: RequestID, error: WireError) -> Action {
        guard case .authenticating = state else { return .ignore }
        failedAuthentications += 1
        if failedAuthentications >= maxFailedAuthentications {
            state = .closed
            var error = error
            error.message += " (too many failed logins; closing the connection)"
            return .respondAndClose(Response(id: id, error: error))
        }
        state = .unauthenticated
        return .respond(Response(id: id, error: error))
    }

    /// The `hello` `id` was not checked (the server is busy with other logins): answer `error`; it does
    /// not count as a failed login.
    public mutating func authenticationNotChecked(id: RequestID, error: WireError) -> Action {
        guard case .authenticating = state else { return .ignore }
        state = .unauthenticated
        return .respond(Response(id: id, error: error))
    }

    /// The peer went away or the server is closing the connection.
    public mutating func connectionClosed() {
        state = .closed
    }
}
