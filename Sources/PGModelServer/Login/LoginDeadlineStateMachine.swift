@_spi(PGModelInternals) import PGModelWire
/// Decides, without sockets or timers, when a connection that has not logged in is closed.
///
/// The login timeout measures the *client's* time: a `hello` the server is still checking when the
/// deadline passes (waiting for a database connection, or bcrypt on a busy machine) is not held against
/// the client. If that `hello` then succeeds the connection stays; if it fails, its answer is written and
/// the connection is closed with the timeout line.
///
/// ```swift
/// var login = LoginDeadlineStateMachine()
/// login.helloReceived()
/// if login.deadlinePassed() == .close { … }                 // the timer fired
/// if login.helloChecked(succeeded: false) == .close { … }   // after writing the hello's answer
/// ```
@_spi(PGModelInternals) public struct LoginDeadlineStateMachine: Sendable, Hashable {
    /// Where the connection is on its way to logging in.
    public enum State: Sendable, Hashable {
        /// Waiting for the client to send a `hello`.
        case waitingForHello
        /// A `hello` is being checked; the deadline has not passed.
        case checking
        /// A `hello` is being checked and the deadline passed meanwhile.
        case checkingPastDeadline
        /// Logged in: the deadline no longer applies.
        case loggedIn
        /// Closed for the timeout (or the connection ended).
        case closed
    }

    /// What the server does next.
    public enum Action: Sendable, Hashable {
        /// Nothing.
        case none
        /// Write the `timeout` line (id null) and close the connection.
        case close
    }

    public private(set) var state: State = .waitingForHello

    public init() {}

    /// A `hello` line arrived and its check starts.
    public mutating func helloReceived() {
        if state == .waitingForHello { state = .checking }
    }

    /// The check of the `hello` ended.
    public mutating func helloChecked(succeeded: Bool) -> Action {
        switch state {
        case .checking:
            state = succeeded ? .loggedIn : .waitingForHello
            return .none
        case .checkingPastDeadline:
            state = succeeded ? .loggedIn : .closed
            return succeeded ? .none : .close
        case .waitingForHello, .loggedIn, .closed:
            return .none
        }
    }

    /// The `hello` being checked was answered without a check (the server was busy with other logins):
    /// that was the server's time, not the client's, so the client waits for its next `hello` with a
    /// whole login timeout again. Returns whether to start the timer anew.
    public mutating func helloDeferred() -> Bool {
        switch state {
        case .checking, .checkingPastDeadline:
            state = .waitingForHello
            return true
        case .waitingForHello, .loggedIn, .closed:
            return false
        }
    }

    /// The login timer fired.
    public mutating func deadlinePassed() -> Action {
        switch state {
        case .waitingForHello:
            state = .closed
            return .close
        case .checking:
            state = .checkingPastDeadline
            return .none
        case .checkingPastDeadline, .loggedIn, .closed:
            return .none
        }
    }

    /// The connection ended for another reason.
    public mutating func connectionClosed() {
        state = .closed
    }
}
