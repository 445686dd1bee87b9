@_spi(PGModelInternals) import PGModelCore

@_spi(PGModelInternals) extension PGModelError.Code {
    /// A `hello` on a connection that is already logged in.
    ///
    /// ```swift
    /// if error.code == .alreadyAuthenticated { /* open a second connection to switch users */ }
    /// ```
    public static let alreadyAuthenticated = PGModelError.Code(rawValue: "already_authenticated")
    /// The server already serves its maximum number of connections; it closes this one.
    ///
    /// ```swift
    /// if error.code == .tooManyConnections { /* retry later */ }
    /// ```
    public static let tooManyConnections = PGModelError.Code(rawValue: "too_many_connections")
    /// The server is shutting down; it answers nothing more on this connection.
    ///
    /// ```swift
    /// if error.code == .shuttingDown { /* reconnect to another instance */ }
    /// ```
    public static let shuttingDown = PGModelError.Code(rawValue: "shutting_down")
    /// A `hello` arrived while the server was already checking or queueing as many logins as it takes;
    /// no password was checked and nothing counts against the user or the connection, which stays open.
    ///
    /// ```swift
    /// if error.code == .serverBusy { /* wait a short, random pause and say hello again */ }
    /// ```
    public static let serverBusy = PGModelError.Code(rawValue: "server_busy")
    /// The server accepts only TLS connections and this one began in plain text; it closes it.
    ///
    /// ```swift
    /// if error.code == .tlsRequired { /* connect with pgmodels:// (or ?tls=true) instead */ }
    /// ```
    public static let tlsRequired = PGModelError.Code(rawValue: "tls_required")
    /// The session's user changed since its login (a new password, admin flag or name), was removed, or
    /// an operator ended their sessions (`pgmodel sessions disconnect`); the server closes the connection.
    ///
    /// ```swift
    /// if error.code == .sessionRevoked { /* log in again, with the new password */ }
    /// ```
    public static let sessionRevoked = PGModelError.Code(rawValue: "session_revoked")
}

@_spi(PGModelInternals) extension PGModelError.Code {
    /// A `subscribe` beyond the per-connection limit (``SubscriptionStateMachine/defaultMaxSubscriptions``).
    ///
    /// ```swift
    /// if error.code == .tooManySubscriptions { /* unsubscribe first, or share one subscription */ }
    /// ```
    public static let tooManySubscriptions = PGModelError.Code(rawValue: "too_many_subscriptions")
}

@_spi(PGModelInternals) extension PGModelError.Code {
    /// A save in parts passed the server's limit for one save (`maxSaveBytes`), or the server holds as many
    /// parts of unfinished saves as it will; the save was dropped and nothing was written.
    ///
    /// ```swift
    /// if error.code == .saveTooLarge { /* save in smaller transactions, or retry later */ }
    /// ```
    public static let saveTooLarge = PGModelError.Code(rawValue: "save_too_large")
}
