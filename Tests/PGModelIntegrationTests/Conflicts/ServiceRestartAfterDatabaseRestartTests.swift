import Foundation
@_spi(PGModelInternals) import PGModel
import PGModelTesting
import Testing

/// Reproduces an open bug: once PostgreSQL has restarted under a running service, the service's graceful
/// shutdown returns but its listening socket stays open (LISTEN in /proc/net/tcp), so another service cannot
/// bind the port. Without the database restart the port is free at once. Disabled until fixed.
@Suite("ServiceRestartAfterDatabaseRestartTests", .serialized,
       .disabled("reproduces the listener left open by a graceful shutdown after a database restart"),
       .enabled(if: ProcessInfo.processInfo.environment["PGMODEL_RESTART_COMMAND"] != nil, "needs the embedded cluster (scripts/test.sh)"))
struct ServiceRestartAfterDatabaseRestartTests {
    @Test func restartOnSamePort() async throws {
        let service = try await PGModelTestService.start()
        try await service.register(Schema(ConflictModels.models))
        let user = try await service.makeUser("scratch")
        let container = try await offCooperativePool { try ModelContainer(for: Schema(ConflictModels.models), configurations: ModelConfiguration(url: user)) }
        _ = try await offCooperativePool { try ModelContext(container).fetchCount(FetchDescriptor<ConflictModels.EditedMemo>()) }
        let tally = SaveTally()
        let key = "scratch-\(UUID().uuidString)"
        try await offCooperativePool {
            let c = ModelContext(container)
            c.insert(ConflictModels.EditedMemo(key: key, title: "t"))
            try c.save()
        }
        let clients = (0..<2).map { MemoIncrementer(container: container, key: key, client: $0, tally: tally) }
        for client in clients { client.start() }
        _ = try await offCooperativePool { tally.wait(for: 10, seconds: 60) }
        try await restartPostgreSQL()
        _ = try await offCooperativePool { tally.wait(for: tally.count + 10, seconds: 60) }
        print("saved after the database restart")
        defer { for client in clients { client.stop() } }
        let port = service.port, schemaName = service.schemaName
        await service.shutdown()
        var lastError: (any Error)?
        for attempt in 0..<50 {
            do {
                let again = try await PGModelTestService.start(schemaName: schemaName) { $0.port = port }
                print("bound again after \(attempt) attempts")
                await again.shutdown()
                return
            } catch {
                lastError = error
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        print("never bound: \(String(describing: lastError))")
        let out = try String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)
        let hex = String(format: "%04X", port)
        print("sockets on \(hex):\n" + out.split(separator: "\n").filter { $0.contains(":\(hex) ") }.joined(separator: "\n"))
        Issue.record("not rebound")
    }
}
