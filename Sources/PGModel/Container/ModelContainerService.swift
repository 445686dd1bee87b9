import ServiceLifecycle

/// A ``ModelContainer``'s lifetime as a ServiceLifecycle `Service`: it runs until the server shuts down
/// gracefully (or its task is cancelled), then closes the container's connections (``ModelContainer/close()``)
/// — the direct store's pool, the change listener and the history feed, or the service connection, which
/// says `bye` first. Calls made after that throw `connection_failed`.
///
/// Put it in the `ServiceGroup` **before** the HTTP server: a group shuts its services down in reverse
/// order, each after the one listed after it has finished, so the server first stops accepting
/// connections and answers the requests in flight, and only then does the container close under them.
///
/// ```swift
/// let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: databaseURL))
/// let app = Application(router: router)                      // Hummingbird 2
/// let group = ServiceGroup(configuration: .init(
///     services: [ModelContainerService(container), app],     // the container outlives the server
///     gracefulShutdownSignals: [.sigterm, .sigint],
///     logger: logger))
/// try await group.run()
/// ```
public struct ModelContainerService: Service {
    /// The container this service closes at shutdown.
    ///
    /// ```swift
    /// let service = ModelContainerService(container)
    /// let context = ModelContext(service.container)
    /// ```
    public let container: ModelContainer

    /// A service that closes `container` when the server shuts down.
    ///
    /// ```swift
    /// let service = ModelContainerService(container)
    /// ```
    public init(_ container: ModelContainer) {
        self.container = container
    }

    /// Waits for graceful shutdown or cancellation, then closes the container. Returns only then: a
    /// `ServiceGroup` treats a service that returns early as the end of the whole group.
    ///
    /// ```swift
    /// try await ModelContainerService(container).run()   // normally the ServiceGroup calls this
    /// ```
    public func run() async throws {
        // Cancellation (the group tearing down after another service failed) ends the wait as well as a
        // graceful shutdown does; either way the connections are closed before the service returns.
        try? await gracefulShutdown()
        await container.close()
    }
}
