import Foundation
import Hummingbird
import Logging
import PGModel
import TripsAPI

// TripsAPI: a Hummingbird HTTP JSON API over PGModel (examples/README.md, "TripsAPI").
//
//   TRIPSAPI_STORE=postgres://pgmodel:pgmodel@127.0.0.1:55432/pgmodel swift run TripsAPIExample
//   curl -s localhost:8080/trips
//   TRIPSAPI_STORE=… swift run TripsAPIExample migrate [--dry-run] [--json]   # the schema migration alone
//
// TRIPSAPI_STORE (or DATABASE_URL) names the store: postgres:// directly, as one trusted user, or
// pgmodel://user:password@host:port through the service, as that one user. Neither set: in memory, on
// a private PostgreSQL cluster the process starts and removes. TRIPSAPI_HOST (127.0.0.1) and
// TRIPSAPI_PORT (8080) say where it listens. SIGINT or SIGTERM stops it gracefully: the server drains
// its requests, then the container closes its connections.

let environment = ProcessInfo.processInfo.environment

// `TripsAPIExample migrate [--dry-run] [--json]`: run the migration plan and exit, before a release
// starts; the server itself never takes arguments.
if CommandLine.arguments.dropFirst().first == "migrate" {
    exit(TripsAPIApp.migrate(arguments: Array(CommandLine.arguments.dropFirst(2)), environment: environment))
}
var logger = Logger(label: "TripsAPI")
logger.logLevel = environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("TripsAPI: \(message)\n".utf8))
    exit(2)
}

let host = environment["TRIPSAPI_HOST"] ?? "127.0.0.1"
guard let port = Int(environment["TRIPSAPI_PORT"] ?? "8080"), (0...65_535).contains(port) else {
    fail("TRIPSAPI_PORT must be a port number")
}
let container: ModelContainer
do {
    let url = try TripsAPIApp.storeURL(environment: environment)
    container = try TripsAPIApp.makeContainer(url: url)
    logger.info("store ready", metadata: ["store": "\(url.map { $0.scheme ?? "?" } ?? "in-memory")"])
} catch let error as PGModelError {
    fail("\(error.code): \(error.message)")
} catch {
    fail("\(error)")
}

let app = TripsAPIApp.makeApplication(container: container, host: host, port: port, logger: logger)
do {
    try await app.runService()
} catch {
    fail("\(error)")
}
