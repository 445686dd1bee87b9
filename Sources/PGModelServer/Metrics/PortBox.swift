import NIOConcurrencyHelpers

/// The port a server bound, for whoever waits for it.
///
/// ```swift
/// box.set(9090)
/// let port = try await box.value()
/// ```
final class PortBox: Sendable {
    private struct State {
        var outcome: Result<Int, any Error>?
        var waiters: [CheckedContinuation<Int, any Error>] = []
    }

    private let state = NIOLockedValueBox(State())

    func set(_ port: Int) { settle(.success(port)) }

    /// Fails waiters, unless a port was already set (then later waiters still get it).
    func fail(_ error: any Error) {
        let waiters = state.withLockedValue { state -> [CheckedContinuation<Int, any Error>] in
            if case .success = state.outcome { return [] }
            state.outcome = .failure(error)
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(throwing: error) }
    }

    private func settle(_ outcome: Result<Int, any Error>) {
        let waiters = state.withLockedValue { state -> [CheckedContinuation<Int, any Error>] in
            state.outcome = outcome
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(with: outcome) }
    }

    func value() async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            let outcome = state.withLockedValue { state -> Result<Int, any Error>? in
                if let outcome = state.outcome { return outcome }
                state.waiters.append(continuation)
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }
}
