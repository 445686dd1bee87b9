import NIOConcurrencyHelpers
// The `willSet:`/`didSet:` forms of `withObservationTracking`: the public form only announces a change
// before it happens, and a run started from there could read the old value.
@_spi(SwiftUI) import Observation

/// Linux's Observation module has `withObservationTracking` but not the continuous form the SwiftData
/// seeds use; PGModel provides it with the same shape.
///
/// ```swift
/// token = withContinuousObservation(options: .didSet) { [weak self] _ in
///     self?.bounds = self?.calculateBounds(trips: resultsObserver.results)
/// }
/// ```
public enum ObservationTracking {
    /// When the closure runs again: before a tracked property changes, or after.
    public struct Options: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let willSet = Options(rawValue: 1)
        public static let didSet = Options(rawValue: 2)
    }

    /// Why the closure is running.
    public struct Event: Sendable, Hashable {
        public enum Kind: Sendable, Hashable {
            /// The first run, when observation starts.
            case initial
            case willSet
            case didSet
        }

        public let kind: Kind
    }

    /// Keeps an observation alive: it ends when the token is cancelled or deallocated.
    public final class Token: Sendable {
        private let cancelled = NIOLockedValueBox(false)

        init() {}

        deinit { cancel() }

        /// Stops the observation; the closure does not run again.
        public func cancel() { cancelled.withLockedValue { $0 = true } }

        /// Whether ``cancel()`` was called.
        public var isCancelled: Bool { cancelled.withLockedValue { $0 } }
    }
}

/// Runs `body` now and again whenever an observable property it read changes, on the caller's actor,
/// until the returned token is cancelled or released.
///
/// With `.didSet` (the default) `body` runs after the change; with `.willSet`, as soon as it is
/// announced. Changes made while a run is pending are coalesced into that run.
///
/// ```swift
/// token = withContinuousObservation(options: [.didSet]) { [weak self] _ in
///     self?.count = observer.results.count
/// }
/// token = withContinuousObservation(options: .didSet, apply: { _ in print(observer.results.count) })
/// ```
public func withContinuousObservation(options: ObservationTracking.Options = .didSet,
                                      isolation: isolated (any Actor)? = #isolation,
                                      apply body: @escaping (ObservationTracking.Event) -> Void) -> ObservationTracking.Token {
    let token = ObservationTracking.Token()
    let runner = ContinuousObservationRunner(body: body, options: options, token: token)
    runner.run(.init(kind: .initial))
    return token
}

/// Re-arms `withObservationTracking` after every change. The body is only ever called on the actor
/// that started the observation (or, when there was none, on the task that reruns it), one run at a time.
final class ContinuousObservationRunner: @unchecked Sendable {
    // @unchecked: `body` is not Sendable, but it is only invoked from `run`, which the initial call and
    // the rerun tasks — each hopping to `isolation` first — execute one at a time.
    private let body: (ObservationTracking.Event) -> Void
    private let options: ObservationTracking.Options
    private weak var token: ObservationTracking.Token?
    private let isolation: (any Actor)?
    private let pending = NIOLockedValueBox(false)

    init(body: @escaping (ObservationTracking.Event) -> Void, options: ObservationTracking.Options,
         token: ObservationTracking.Token, isolation: isolated (any Actor)? = #isolation) {
        self.body = body
        self.options = options
        self.token = token
        self.isolation = isolation
    }

    func run(_ event: ObservationTracking.Event) {
        guard let token, !token.isCancelled else { return }
        let reads = ObservationReadLog()
        ObservationReadLog.$current.withValue(reads) {
            if options.contains(.willSet) {
                withObservationTracking {
                    body(event)
                } willSet: { [self] tracking in
                    tracking.cancel()
                    scheduleRerun()
                }
            } else {
                // Called once the mutation is done, whichever thread made it: the next run reads the new value.
                withObservationTracking {
                    body(event)
                } didSet: { [self] tracking in
                    tracking.cancel()
                    scheduleRerun()
                }
            }
        }
        // Tracking took effect only now: a PGModel observer that changed after `body` read it, and
        // before, announced that change to nobody.
        if reads.changedSinceRead { scheduleRerun() }
    }

    /// Runs the closure again, once for any number of changes announced before it does.
    private func scheduleRerun() {
        let alreadyPending = pending.withLockedValue { pending in
            defer { pending = true }
            return pending
        }
        guard !alreadyPending else { return }
        let kind: ObservationTracking.Event.Kind = options.contains(.willSet) ? .willSet : .didSet
        Task { await self.rerun(kind, on: self.isolation) }
    }

    private func rerun(_ kind: ObservationTracking.Event.Kind, on actor: isolated (any Actor)?) async {
        pending.withLockedValue { $0 = false }
        run(.init(kind: kind))
    }
}
