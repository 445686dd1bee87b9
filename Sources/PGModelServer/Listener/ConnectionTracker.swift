import NIOConcurrencyHelpers
import NIOCore

/// The open client connections: enforces the connection limit and, at shutdown, stops every
/// connection from reading further requests while letting the one in progress finish.
///
/// ```swift
/// guard tracker.admit(channel) == .admitted else { … }
/// defer { tracker.remove(channel) }
/// ```
final class ConnectionTracker: Sendable {
    enum Admission: Equatable {
        case admitted
        case tooManyConnections
        case shuttingDown
    }

    private struct State {
        var channels: [ObjectIdentifier: any Channel] = [:]
        var isShuttingDown = false
    }

    private let state = NIOLockedValueBox(State())
    let maxConnections: Int?

    init(maxConnections: Int?) {
        self.maxConnections = maxConnections
    }

    /// Counts `channel` in, unless the limit is reached or the server is stopping.
    func admit(_ channel: any Channel) -> Admission {
        state.withLockedValue { state in
            if state.isShuttingDown { return .shuttingDown }
            if let maxConnections, state.channels.count >= maxConnections { return .tooManyConnections }
            state.channels[ObjectIdentifier(channel)] = channel
            return .admitted
        }
    }

    func remove(_ channel: any Channel) {
        _ = state.withLockedValue { $0.channels.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    var isShuttingDown: Bool { state.withLockedValue { $0.isShuttingDown } }

    var count: Int { state.withLockedValue { $0.channels.count } }

    /// Stops reading on every connection: idle ones end at once, busy ones after their current response.
    func beginShutdown() {
        let channels = state.withLockedValue { state -> [any Channel] in
            state.isShuttingDown = true
            return Array(state.channels.values)
        }
        for channel in channels {
            // Closing only the input ends the request stream but keeps the socket writable for the
            // response in progress; if half-closing is unsupported, close outright.
            channel.close(mode: .input).whenFailure { _ in channel.close(promise: nil) }
        }
    }

    /// Closes every connection still open `delay` from now: those whose client stopped reading (their
    /// answer cannot be written) or whose request outlived the grace period. A no-op when all are gone.
    func closeRemaining(after delay: TimeAmount, on eventLoop: any EventLoop) {
        eventLoop.scheduleTask(in: delay) { [self] in
            let channels = state.withLockedValue { Array($0.channels.values) }
            for channel in channels { channel.close(promise: nil) }
        }
    }
}
