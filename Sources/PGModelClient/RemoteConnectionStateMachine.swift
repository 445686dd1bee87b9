@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO

/// The service client's connection decisions, without sockets: when a call opens the connection, when
/// it waits for one being opened by another call, who is woken when the login succeeds or fails, what
/// a dropped connection and `close()` leave behind, and which schemas a new connection must register
/// again. ``RemoteModelStore`` carries them out.
///
/// One connection at a time; calls made while it is being opened wait for that one attempt and share
/// its outcome, so a server that is down fails every waiting call with the same `connection_failed`.
///
/// ```swift
/// var connection = RemoteConnectionStateMachine<Int>()
/// #expect(connection.requestChannel(waiterID: 1) == .open)
/// #expect(connection.requestChannel(waiterID: 2) == .wait)
/// #expect(connection.opened(7) == .resume(waiters: [2], channel: 7))
/// ```
package struct RemoteConnectionStateMachine<Channel: Equatable & Sendable>: Sendable {
    package enum State: Equatable, Sendable {
        /// No connection; the next call opens one.
        case idle
        /// One call is connecting and logging in; `waiters` wait for its outcome.
        case connecting(waiters: [Int])
        /// Logged in.
        case connected(Channel)
        /// `close()` was called: every later call fails.
        case closed
    }

    /// What a call that needs the connection does.
    package enum ChannelAction: Equatable, Sendable {
        /// Use this logged-in connection.
        case use(Channel)
        /// Open, log in, register ``schemas``, then report ``opened(_:)`` or ``openFailed()``.
        case open
        /// Another call is opening it: wait for that outcome.
        case wait
        /// The store is closed.
        case closed
    }

    /// What follows a successful login.
    package enum OpenedAction: Equatable, Sendable {
        /// The waiters share `channel`.
        case resume(waiters: [Int], channel: Channel)
        /// The store was closed meanwhile: close `channel` and fail the waiters.
        case closeAndFail(waiters: [Int], channel: Channel)
    }

    package private(set) var state: State = .idle
    /// Schemas prepared so far, in order: a new connection registers them again before any call uses it.
    package private(set) var schemas: [SchemaDescription] = []

    package init() {}

    /// A call needs the connection. `isActive` tells whether a connected channel still is.
    package mutating func requestChannel(waiterID: Int, isActive: (Channel) -> Bool = { _ in true }) -> ChannelAction {
        switch state {
        case .closed:
            return .closed
        case .connected(let channel) where isActive(channel):
            return .use(channel)
        case .connecting(let waiters):
            state = .connecting(waiters: waiters + [waiterID])
            return .wait
        case .idle, .connected:
            state = .connecting(waiters: [])
            return .open
        }
    }

    /// The opening call logged in on `channel`.
    package mutating func opened(_ channel: Channel) -> OpenedAction {
        switch state {
        case .connecting(let waiters):
            state = .connected(channel)
            return .resume(waiters: waiters, channel: channel)
        case .closed:
            return .closeAndFail(waiters: [], channel: channel)
        case .idle, .connected:
            // Unreachable by construction (only the opener reports); keep the new channel.
            state = .connected(channel)
            return .resume(waiters: [], channel: channel)
        }
    }

    /// Opening or logging in failed: the waiters to fail with the same error. The next call tries again.
    package mutating func openFailed() -> [Int] {
        guard case .connecting(let waiters) = state else { return [] }
        state = .idle
        return waiters
    }

    /// `channel` closed (the server went away, or a deadline closed it): the next call reconnects.
    package mutating func channelClosed(_ channel: Channel) {
        if case .connected(let current) = state, current == channel { state = .idle }
    }

    /// A schema was registered on the current connection; later connections register it again.
    package mutating func prepared(_ schema: SchemaDescription) {
        if !schemas.contains(schema) { schemas.append(schema) }
    }

    /// Closes the store: the channel to say `bye` on and close, and the waiters to fail.
    package mutating func close() -> (channel: Channel?, waiters: [Int]) {
        defer { state = .closed }
        switch state {
        case .connected(let channel): return (channel, [])
        case .connecting(let waiters): return (nil, waiters)
        case .idle, .closed: return (nil, [])
        }
    }
}
