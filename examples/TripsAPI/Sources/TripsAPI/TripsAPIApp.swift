import Foundation
import Hummingbird
import Logging
import PGModel

/// Puts the API together: the store's container, the router and the Hummingbird application that
/// serves it. `swift run TripsAPIExample` uses it; so do the tests, over real HTTP.
///
/// ```swift
/// let container = try TripsAPIApp.makeContainer(url: try TripsAPIApp.storeURL(environment: ProcessInfo.processInfo.environment))
/// let app = TripsAPIApp.makeApplication(container: container, host: "127.0.0.1", port: 8080, logger: Logger(label: "TripsAPI"))
/// try await app.runService()       // until SIGINT or SIGTERM; then the server drains, then the container closes
/// ```
public enum TripsAPIApp {
    /// The PostgreSQL schema the API's tables live in on the direct store, unless the URL names one:
    /// its `Trip` is not the README tour's or SampleTrips's, and two apps' `trip` tables must not meet.
    public static let defaultSchema = "trips_api"

    /// The store's URL from `TRIPSAPI_STORE` (or `DATABASE_URL`), with ``defaultSchema`` added to a
    /// `postgres://` URL that names no schema; SwiftData's in-memory URL when neither is set (a private
    /// PostgreSQL cluster the process starts and removes). The URL comes from the environment, never
    /// the command line, because it may carry a password. Throws `invalid_configuration` for a value
    /// that is not a URL.
    ///
    /// ```swift
    /// let url = try TripsAPIApp.storeURL(environment: ["TRIPSAPI_STORE": "postgres://pgmodel:pgmodel@127.0.0.1:55432/pgmodel"])
    /// // postgres://pgmodel:pgmodel@127.0.0.1:55432/pgmodel?schema=trips_api
    /// ```
    public static func storeURL(environment: [String: String]) throws -> URL? {
        guard let text = environment["TRIPSAPI_STORE"] ?? environment["DATABASE_URL"], !text.isEmpty else { return nil }
        guard let url = URL(string: text), url.scheme != nil else {
            throw PGModelError(.invalidConfiguration, "TRIPSAPI_STORE is not a URL: set it to a postgres:// or pgmodel:// URL")
        }
        return withDefaultSchema(url)
    }

    /// `url` with `schema=` ``defaultSchema`` added when it is a `postgres://` URL naming no schema.
    ///
    /// ```swift
    /// let url = TripsAPIApp.withDefaultSchema(URL(string: "postgres://pgmodel@127.0.0.1/pgmodel")!)
    /// ```
    public static func withDefaultSchema(_ url: URL) -> URL {
        guard url.scheme == "postgres" || url.scheme == "postgresql",
              var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        var items = components.queryItems ?? []
        if items.contains(where: { $0.name == "schema" }) { return url }
        items.append(URLQueryItem(name: "schema", value: defaultSchema))
        components.queryItems = items
        return components.url ?? url
    }

    /// The API's schema at its current version.
    public static var schema: Schema { Schema(versionedSchema: TripsAPISchemaV2.self) }

    /// The API's container on the store at `url` (in memory when nil): migrates a store of an earlier
    /// version through ``TripsAPIMigrationPlan`` (nothing to do when `TripsAPIExample migrate` already
    /// did), creates its tables on a new direct store, registers its schema with the service.
    ///
    /// ```swift
    /// let container = try TripsAPIApp.makeContainer(url: url)
    /// ```
    public static func makeContainer(url: URL?) throws -> ModelContainer {
        let configuration = url.map { ModelConfiguration(url: $0) } ?? ModelConfiguration(isStoredInMemoryOnly: true)
        return try ModelContainer(for: schema, migrationPlan: TripsAPIMigrationPlan.self, configurations: configuration)
    }

    /// `TripsAPIExample migrate …`: runs ``TripsAPIMigrationPlan`` on the store the server would use
    /// (`TRIPSAPI_STORE`, else `DATABASE_URL`, in ``defaultSchema``) unless `--database-url` names
    /// another, and returns the exit status (see `MigrationCommandLine`).
    ///
    /// ```swift
    /// exit(TripsAPIApp.migrate(arguments: ["--dry-run"], environment: ProcessInfo.processInfo.environment))
    /// ```
    public static func migrate(arguments: [String], environment: [String: String]) -> Int32 {
        let store: URL?
        do {
            store = try storeURL(environment: environment)
        } catch let error as PGModelError {
            MigrationCommandLine.write("Error: \(error.message) [\(error.code)]\n", to: .standardError)
            return 2
        } catch {
            MigrationCommandLine.write("Error: \(error) [invalid_configuration]\n", to: .standardError)
            return 2
        }
        return MigrationCommandLine.run(arguments: arguments, environment: environment, schema: schema,
                                        migrationPlan: TripsAPIMigrationPlan.self, defaultDatabaseURL: store,
                                        defaultSchemaName: defaultSchema)
    }

    /// The router: `/trips` (``TripsController``) behind ``PGModelErrorMiddleware``, and `GET /health`.
    ///
    /// ```swift
    /// let router = TripsAPIApp.makeRouter(container: container)
    /// ```
    public static func makeRouter(container: ModelContainer) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: PGModelErrorMiddleware())
        router.get("health") { _, _ in "ok" }
        TripsController(container: container).addRoutes(to: router.group("trips"))
        return router
    }

    /// The Hummingbird application serving ``makeRouter(container:)`` on `host:port` (port 0: any free
    /// port), with the container's lifetime as a service of the application's `ServiceGroup`
    /// (`ModelContainerService`). Hummingbird runs the services it is given before its HTTP server, so
    /// at shutdown the server stops and answers the requests in flight first, and only then is the
    /// container closed.
    ///
    /// ```swift
    /// let app = TripsAPIApp.makeApplication(container: container, host: "127.0.0.1", port: 8080, logger: logger)
    /// try await app.runService()
    /// ```
    public static func makeApplication(container: ModelContainer, host: String, port: Int, logger: Logger) -> some ApplicationProtocol {
        Application(
            router: makeRouter(container: container),
            configuration: .init(address: .hostname(host, port: port), serverName: "TripsAPI"),
            services: [ModelContainerService(container)],
            logger: logger
        )
    }
}
