import Foundation
@_spi(PGModelInternals) import PGModelCore
import PGModelTesting

/// A real streaming standby of the test database's cluster, started by `scripts/standby.sh` for one
/// test and stopped after it, even when the test fails.
struct Standby {
    /// Its directory under /tmp (data directory and unix socket).
    let directory: String
    /// Its TCP port on 127.0.0.1.
    let port: Int

    /// `pg_basebackup` is installed and the test database is a plain `postgres://` URL with a port.
    static var isAvailable: Bool {
        let installed = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql"))?.contains {
            FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/\($0)/bin/pg_basebackup")
        } ?? false
        return installed && ProcessInfo.processInfo.environment["PGMODEL_TEST_DATABASE_URL"]?.isEmpty == false
    }

    /// Runs `body` with a standby of the test database's cluster on a free port in 55500–55599.
    static func with<T: Sendable>(_ body: (Standby) async throws -> T) async throws -> T {
        let suffix = ServerTestHarness.uniqueSuffix()
        let directory = "/tmp/pgr-\(suffix.prefix(12))"
        let primary = try TestDatabase.url()
        var started: Standby?
        for _ in 0..<10 {
            let port = Int.random(in: 55500...55599)
            if (try? await offCooperativePool { try run(["start", directory, String(port), primary]) }) != nil {
                started = Standby(directory: directory, port: port)
                break
            }
        }
        guard let standby = started else {
            throw PGModelError(.internalError, "scripts/standby.sh could not start a standby on any port tried")
        }
        do {
            let result = try await body(standby)
            try? await standby.stop()
            return result
        } catch {
            try? await standby.stop()
            throw error
        }
    }

    /// The test database's URL with `pgmodel_replicas` naming this standby (and `extra` query items).
    func storeURL(extra: String = "") throws -> String {
        let primary = try TestDatabase.url()
        return primary + (primary.contains("?") ? "&" : "?") + "pgmodel_replicas=127.0.0.1:\(port)" + extra
    }

    /// Pauses WAL replay: the standby stays where it is until ``resume()``.
    func pause() async throws { try await offCooperativePool { [directory] in try Self.run(["pause", directory]) } }

    /// Resumes WAL replay.
    func resume() async throws { try await offCooperativePool { [directory] in try Self.run(["resume", directory]) } }

    /// Stops the standby and removes its directory. Idempotent.
    func stop() async throws { try await offCooperativePool { [directory] in try Self.run(["stop", directory]) } }

    /// `scripts/standby.sh arguments…`, blocking its thread (callers run it off the cooperative pool).
    @discardableResult
    static func run(_ arguments: [String]) throws -> String {
        try RepositoryScript.run("standby.sh", arguments)
    }
}
