import Foundation
import Logging
@_spi(PGModelInternals) import PGModel
import PostgresNIO

/// Commit-to-observer latency through the service: the tables made by the direct store on a fresh
/// schema (as at deploy time), a service in this process on it, and the observers' container and the
/// writer's each a client of their own as one non-admin user — so every notification is a `changes`
/// event the server checked against that user's history, and the observers' re-fetch a service request.
///
/// ```swift
/// let (observing, writing, service) = try serviceContainers(databaseURL: url)
/// let result = try measureLatency(observers: 100, commits: 100, observing: observing, writing: writing)
/// ```
func serviceContainers(databaseURL: URL) throws -> (observing: ModelContainer, writing: ModelContainer, service: InProcessService) {
    let schema = "bench_lat_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(8)
    guard var components = URLComponents(url: databaseURL, resolvingAgainstBaseURL: false), let host = components.host else {
        throw PGModelError(.invalidConfiguration, "DATABASE_URL has no host")
    }
    components.queryItems = [URLQueryItem(name: "schema", value: schema)]
    guard let directURL = components.url else { throw PGModelError(.invalidConfiguration, "DATABASE_URL cannot take a schema") }
    _ = try ModelContainer(for: BenchNote.self, configurations: ModelConfiguration(url: directURL))
    let configuration = PostgresConnection.Configuration(
        host: host, port: components.port ?? 5432, username: components.user ?? "postgres",
        password: components.password, database: String(components.path.dropFirst()), tls: .disable).pgmodelSession()
    let box = ServiceBox()
    runDetached("service start") {
        let logger = Logger(label: "bench")
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        box.service = try await InProcessService.start(databaseURL: databaseURL, schema: schema, on: connection, logger: logger)
        try await connection.close()
    }
    guard let service = box.service else { throw PGModelError(.internalError, "the service did not start") }
    let observing = try ModelContainer(for: BenchNote.self, configurations: ModelConfiguration(url: service.url))
    let writing = try ModelContainer(for: BenchNote.self, configurations: ModelConfiguration(url: service.url))
    return (observing, writing, service)
}

/// Hands the started service out of its task.
final class ServiceBox: @unchecked Sendable {
    var service: InProcessService?
}
