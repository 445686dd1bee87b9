import Foundation
@_spi(PGModelInternals) import PGModelCore
import Logging
@_spi(PGModelInternals) import PGModelServer
import ServiceLifecycle
import Testing

/// Graceful shutdown and start-up failures of the service.
@Suite("Server: lifecycle")
struct ServerShutdownTests {
    @Test("graceful shutdown closes idle connections, returns from run() and stops accepting")
    func gracefulShutdown() async throws {
        let server = try LineServer(
            configuration: LineServerConfiguration(databaseURL: try ServerTestHarness.databaseURL(), port: 0, maxDatabaseConnections: 2),
            logger: ServerTestHarness.logger)
        let group = ServiceGroup(services: [server], logger: ServerTestHarness.logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let port = try await server.listeningPort()
            let client = try await RawProtocolClient.connect(port: port)
            #expect(try await client.request(#"{"id":1,"op":"ping"}"#).ok == true)
            #expect(server.connectionCount == 1)

            await group.triggerGracefulShutdown()
            try await client.expectClosed()
            try await tasks.next()   // run() returned without throwing
            await client.close()

            await #expect(throws: (any Error).self, "nobody listens any more") {
                try await RawProtocolClient.connect(port: port)
            }
            await #expect(throws: (any Error).self, "a stopped server has no port") { try await server.listeningPort() }
        }
    }

    @Test("a server runs once")
    func runsOnce() async throws {
        try await ServerTestHarness.withServer { _ in }
        let server = try LineServer(
            configuration: LineServerConfiguration(databaseURL: try ServerTestHarness.databaseURL(), port: 0), logger: ServerTestHarness.logger)
        let group = ServiceGroup(services: [server], logger: ServerTestHarness.logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            _ = try await server.listeningPort()
            await #expect(throws: PGModelError.self) { try await server.run() }
            await group.triggerGracefulShutdown()
            try await tasks.next()
        }
    }

    @Test("an unreachable database fails the start with connection_failed, and listeningPort reports it")
    func unreachableDatabase() async throws {
        // Port 1 on localhost refuses connections at once.
        let server = try LineServer(
            configuration: LineServerConfiguration(databaseURL: "postgres://nobody:x@127.0.0.1:1/none", port: 0),
            logger: ServerTestHarness.logger)
        let failure = await #expect(throws: PGModelError.self) { try await server.run() }
        #expect(failure?.code == .connectionFailed)
        #expect(failure?.message.contains("127.0.0.1:1") == true)
        await #expect(throws: PGModelError.self) { try await server.listeningPort() }
    }

    @Test("a server's description, which service-lifecycle logs, never shows the database password")
    func descriptionHidesPassword() throws {
        let server = try LineServer(configuration: LineServerConfiguration(
            databaseURL: "postgres://svc:T0p-S3cret@db.internal:5432/app?schema=shop", port: 7000))
        for text in ["\(server)", String(reflecting: server), "\(server.configuration)"] {
            #expect(!text.contains("T0p-S3cret"), "\(text)")
            #expect(text.contains("db.internal"))
        }
    }

    @Test("bad configurations are refused before anything starts", arguments: [
        LineServerConfiguration(databaseURL: "mysql://a@b/c"),
        LineServerConfiguration(databaseURL: "postgres://a@b/c", port: 70_000),
        LineServerConfiguration(databaseURL: "postgres://a@b/c", schemaName: "no such"),
        LineServerConfiguration(databaseURL: "postgres://a@b/c", maxLineBytes: 3),
        LineServerConfiguration(databaseURL: "postgres://a@b/c", maxConnections: 0),
    ])
    func badConfiguration(configuration: LineServerConfiguration) {
        let error = #expect(throws: PGModelError.self) { try LineServer(configuration: configuration) }
        #expect(error?.code == .invalidConfiguration)
    }
}

extension LineServerConfiguration: CustomTestStringConvertible {
    public var testDescription: String { "\(databaseURL.prefix(8))… port \(port) line \(maxLineBytes)" }
}
