import NIOConcurrencyHelpers
import NIOCore
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelWire

extension RemoteModelStore {
    /// The client side of subscriptions: the streams handed out by `changeSignals()`, which server
    /// subscription feeds which stream, and the tasks that keep each stream subscribed across
    /// reconnects. Event lines reach it from the ``ResponseRouter`` on the channel's event loop.
    final class SignalHub: Sendable {
        /// Fires once; every waiter (and any later one) resumes. Ends a subscription's wait for its
        /// connection to drop, also when the stream or the store ends first.
        final class Ending: Sendable {
            private let state = NIOLockedValueBox<(fired: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

            func fire() {
                let waiters = state.withLockedValue { state in
                    state.fired = true
                    defer { state.waiters = [] }
                    return state.waiters
                }
                for waiter in waiters { waiter.resume() }
            }

            func wait() async {
                await withCheckedContinuation { continuation in
                    let fired = state.withLockedValue { state in
                        if !state.fired { state.waiters.append(continuation) }
                        return state.fired
                    }
                    if fired { continuation.resume() }
                }
            }
        }

        /// Where a stream's current server subscription lives, to unsubscribe it when the stream ends.
        struct Route {
            var subscription: RequestID
            var channel: any Channel
            var ending: Ending
        }

        private struct Subscriber {
            var continuation: AsyncStream<ChangeSignal>.Continuation
            var task: Task<Void, Never>?
            var route: Route?
        }

        private struct State {
            var isClosed = false
            var nextKey = 0
            var subscribers: [Int: Subscriber] = [:]
            /// Server subscription id → stream key.
            var routes: [RequestID: Int] = [:]
        }

        private let state = NIOLockedValueBox(State())

        /// Adds a stream; `nil` once the store is closed.
        func add(_ continuation: AsyncStream<ChangeSignal>.Continuation) -> Int? {
            state.withLockedValue { state in
                guard !state.isClosed else { return nil }
                defer { state.nextKey += 1 }
                state.subscribers[state.nextKey] = Subscriber(continuation: continuation)
                return state.nextKey
            }
        }

        /// Attaches the task keeping stream `key` subscribed; cancels it if the stream already ended.
        func attach(_ task: Task<Void, Never>, to key: Int) {
            let attached = state.withLockedValue { state -> Bool in
                guard state.subscribers[key] != nil else { return false }
                state.subscribers[key]?.task = task
                return true
            }
            if !attached { task.cancel() }
        }

        /// Whether stream `key` still wants signals.
        func isOpen(_ key: Int) -> Bool {
            state.withLockedValue { !$0.isClosed && $0.subscribers[key] != nil }
        }

        /// Routes the events of server subscription `route.subscription` to stream `key`; call before
        /// sending `subscribe`, because its events may follow the response at once. `false` when the
        /// stream or store has ended.
        func route(_ route: Route, to key: Int) -> Bool {
            state.withLockedValue { state in
                guard !state.isClosed, state.subscribers[key] != nil else { return false }
                state.subscribers[key]?.route = route
                state.routes[route.subscription] = key
                return true
            }
        }

        /// Forgets server subscription `subscription` (its connection is gone).
        func unroute(_ subscription: RequestID, from key: Int) {
            state.withLockedValue { state in
                state.routes[subscription] = nil
                if state.subscribers[key]?.route?.subscription == subscription { state.subscribers[key]?.route = nil }
            }
        }

        /// An event line from the server.
        func deliver(_ event: Event) {
            guard let subscription = event.subscription, let signal = event.changeSignal else { return }
            let continuation = state.withLockedValue { state in
                state.routes[subscription].flatMap { state.subscribers[$0]?.continuation }
            }
            continuation?.yield(signal)
        }

        /// Yields `signal` on stream `key` (`reconnected` after a re-subscription).
        func yield(_ signal: ChangeSignal, to key: Int) {
            state.withLockedValue { $0.subscribers[key]?.continuation }?.yield(signal)
        }

        /// Removes stream `key`: its reader went away or its task ended. Returns its current route, so the
        /// caller can unsubscribe on the server.
        func remove(_ key: Int) -> Route? {
            let removed = state.withLockedValue { state -> Subscriber? in
                guard let subscriber = state.subscribers.removeValue(forKey: key) else { return nil }
                if let route = subscriber.route { state.routes[route.subscription] = nil }
                return subscriber
            }
            removed?.task?.cancel()
            removed?.route?.ending.fire()
            removed?.continuation.finish()
            return removed?.route
        }

        /// The store is closing: every stream finishes.
        func close() {
            let subscribers = state.withLockedValue { state in
                state.isClosed = true
                state.routes = [:]
                defer { state.subscribers = [:] }
                return Array(state.subscribers.values)
            }
            for subscriber in subscribers {
                subscriber.task?.cancel()
                subscriber.route?.ending.fire()
                subscriber.continuation.finish()
            }
        }
    }
}
