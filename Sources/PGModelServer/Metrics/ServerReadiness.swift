import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModelPostgres

/// What the running server tells its readiness probe: whether the registered schema has been loaded,
/// and which change listener it runs. Set by the listener as it starts; read by `/health/ready`.
///
/// ```swift
/// readiness.schemaLoaded()
/// readiness.attach(changeListener)
/// ```
package final class ServerReadiness: Sendable {
    private struct State {
        var isSchemaLoaded = false
        var listener: ChangeListener?
        var isDraining = false
    }

    private let state = NIOLockedValueBox(State())

    package init() {}

    /// The registered schema is loaded: requests can be served.
    package func schemaLoaded() {
        state.withLockedValue { $0.isSchemaLoaded = true }
    }

    /// `listener` is the server's change listener from now on.
    package func attach(_ listener: ChangeListener) {
        state.withLockedValue { $0.listener = listener }
    }

    /// Graceful shutdown began: the server takes no new connections, so a load balancer should stop
    /// sending it any.
    package func draining() {
        state.withLockedValue { $0.isDraining = true }
    }

    package var isSchemaLoaded: Bool { state.withLockedValue { $0.isSchemaLoaded } }

    package var isDraining: Bool { state.withLockedValue { $0.isDraining } }

    /// The listener's status; nil before the server made one.
    package var listenerStatus: ListenerStatus? { state.withLockedValue { $0.listener?.status } }
}
