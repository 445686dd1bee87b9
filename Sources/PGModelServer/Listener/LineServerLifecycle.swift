import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModelCore

/// Shared state between a ``LineServer`` value and its running listener: whether it has started,
/// the bound port for whoever waits for it, and the live connection count.
final class LineServerLifecycle: Sendable {
    private enum Phase {
        case notStarted
        case starting
        case listening(port: Int)
        case finished(any Error)
    }

    private struct State {
        var phase = Phase.notStarted
        var waiters: [CheckedContinuation<Int, any Error>] = []
        var tracker: ConnectionTracker?
    }

    private let state = NIOLockedValueBox(State())

    func markStarted() throws {
        try state.withLockedValue { state in
            guard case .notStarted = state.phase else {
                throw PGModelError(.invalidConfiguration, "a LineServer runs once; create a new one to run again")
            }
            state.phase = .starting
        }
    }

    func listening(on port: Int, tracker: ConnectionTracker) {
        let waiters = state.withLockedValue { state in
            state.phase = .listening(port: port)
            state.tracker = tracker
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: port) }
    }

    func finish(_ error: any Error) {
        let waiters = state.withLockedValue { state in
            state.phase = .finished(error)
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(throwing: error) }
    }

    func listeningPort() async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            let outcome: Result<Int, any Error>? = state.withLockedValue { state in
                switch state.phase {
                case .listening(let port): return .success(port)
                case .finished(let error): return .failure(error)
                case .notStarted, .starting:
                    state.waiters.append(continuation)
                    return nil
                }
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    var connectionCount: Int { state.withLockedValue { $0.tracker?.count ?? 0 } }
}
