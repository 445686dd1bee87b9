import Foundation
import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModelCore

#if canImport(Glibc)
import Glibc
#endif

/// A private, throwaway PostgreSQL cluster for this process: what `isStoredInMemoryOnly` stores use when no
/// database was named (no URL, no `DATABASE_URL`), and what `PGModelTesting` gives tests.
///
/// The first use copies a cluster initialized once per machine and PostgreSQL version (the *template*,
/// kept beside the clusters, as `pg_tmp` keeps one in reserve), starts it on a unix socket in a private
/// folder with durability off (no TCP), and makes the role `pgmodel` and its database as the scripts do.
/// Every in-memory container of the process shares the cluster, each in a schema of its own. The cluster
/// is stopped and removed when the process exits; a watchdog process does it if this one is killed, and
/// the next start reaps whatever a killed watchdog left.
///
/// ```swift
/// let url = try EphemeralCluster.shared.url()   // postgres://pgmodel@localhost/pgmodel?host=/tmp/…
/// ```
package final class EphemeralCluster: Sendable {
    package static let shared = EphemeralCluster()

    private struct Running: Sendable {
        let directory: String
        let url: URL
    }

    private let state = NIOLockedValueBox<Result<Running, PGModelError>?>(nil)

    /// Bumped when what the template holds changes, so a stale template is never copied.
    static let templateRecipe = "r1"
    static let role = "pgmodel"
    static let database = "pgmodel"

    /// The `postgres://` URL of this process's private cluster, started on first use. Throws
    /// `invalid_configuration` when PostgreSQL's server binaries are missing, naming the package and
    /// `DATABASE_URL`, and `connection_failed` when the cluster cannot start (its log's tail says why).
    package func url() throws -> URL {
        try state.withLockedValue { state in
            if let state { return try state.get().url }
            let result: Result<Running, PGModelError>
            do {
                result = .success(try Self.start())
            } catch let error as PGModelError {
                result = .failure(error)
            } catch {
                result = .failure(PGModelError(.connectionFailed, "the private PostgreSQL cluster could not start: \(error)"))
            }
            state = result
            return try result.get().url
        }
    }

    // MARK: Start

    private static func start() throws -> Running {
        let binaries = try PostgresBinaries.find()
        let owner = ClusterOwner.current()
        let root = try owner.privateDirectory(named: "pgmodel-ephemeral-\(owner.name)")
        reapAbandoned(in: root)
        let template = try ensureTemplate(in: root, binaries: binaries, owner: owner)
        let directory = root + "/c-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try owner.run("/bin/cp", ["-a", template, directory])
        do {
            try startServer(data: directory + "/data", socket: directory, binaries: binaries, owner: owner)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        Cleanup.register(directory: directory)
        Cleanup.watch(directory: directory)
        guard let url = URL(string: "postgres://\(role)@localhost/\(database)?host=\(directory)") else {
            throw PGModelError(.internalError, "the private cluster's URL could not be formed")
        }
        return Running(directory: directory, url: url)
    }

    /// The template: an initialized, stopped cluster with the role and database in place, made once per
    /// machine, version and recipe. Built under a temporary name and renamed, so a concurrent first start
    /// in another process never copies a half-made one.
    private static func ensureTemplate(in root: String, binaries: PostgresBinaries, owner: ClusterOwner) throws -> String {
        let template = root + "/template-\(binaries.majorVersion)-\(templateRecipe)"
        if FileManager.default.fileExists(atPath: template + "/data/PG_VERSION") { return template }
        let building = root + "/building-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: building) }
        try owner.makeDirectory(building)
        try owner.run(binaries.path("initdb"), ["-D", building + "/data", "-A", "trust", "-E", "UTF8", "--locale=C.UTF-8",
                                               "--no-sync", "-U", "postgres"])
        try startServer(data: building + "/data", socket: building, binaries: binaries, owner: owner)
        var isRunning = true
        defer { if isRunning { try? owner.run(binaries.path("pg_ctl"), ["-D", building + "/data", "-m", "fast", "-s", "-w", "stop"]) } }
        // As scripts/lib.sh: the service's role is subject to row-level security (never SUPERUSER or
        // BYPASSRLS), with pgmodel_app and pgmodel_admin to switch to.
        let setup = [
            "CREATE ROLE \(role) LOGIN NOSUPERUSER NOBYPASSRLS CREATEDB",
            "ALTER ROLE \(role) SET search_path = public",
            "CREATE ROLE pgmodel_app NOLOGIN NOBYPASSRLS",
            "CREATE ROLE pgmodel_admin NOLOGIN NOBYPASSRLS",
            "GRANT pgmodel_app TO \(role)",
            "GRANT pgmodel_app TO pgmodel_admin",
            "GRANT pgmodel_admin TO \(role)",
            // Its own statement: CREATE DATABASE cannot run inside a transaction.
            "CREATE DATABASE \(database) OWNER \(role)",
        ]
        try owner.run(binaries.path("psql"), ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", building, "-U", "postgres",
                                             "-d", "postgres"] + setup.flatMap { ["-c", $0] })
        // Stopped before the rename: a template must hold no postmaster.pid.
        try owner.run(binaries.path("pg_ctl"), ["-D", building + "/data", "-m", "fast", "-s", "-w", "stop"])
        isRunning = false
        if rename(building, template) != 0, !FileManager.default.fileExists(atPath: template + "/data/PG_VERSION") {
            throw PGModelError(.connectionFailed, "the private PostgreSQL template could not be kept at \(template)")
        }
        return template
    }

    private static func startServer(data: String, socket: String, binaries: PostgresBinaries, owner: ClusterOwner) throws {
        // Durability off: the cluster dies with the process anyway. No TCP: only this folder's socket.
        // As many connections as the scripts' cluster allows: a test process runs its suites in parallel,
        // each with pools and services of its own.
        let options = "-c listen_addresses='' -k \(socket) -c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            + "-c max_connections=500 -c shared_buffers=32MB"
        do {
            try owner.run(binaries.path("pg_ctl"), ["-D", data, "-w", "-s", "-t", "60", "-o", options, "-l", socket + "/server.log", "start"])
        } catch {
            let log = (try? String(contentsOfFile: socket + "/server.log", encoding: .utf8)) ?? ""
            throw PGModelError(.connectionFailed, "the private PostgreSQL cluster in \(socket) did not start: "
                + log.split(separator: "\n").suffix(3).joined(separator: " / "))
        }
    }

    /// Clusters of processes that no longer exist (their watchdog was killed too): stopped and removed.
    package static func reapAbandoned(in root: String) {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: root) else { return }
        for entry in entries {
            let parts = entry.split(separator: "-")
            guard parts.count == 3, parts[0] == "c" || parts[0] == "building", let pid = Int32(parts[1]),
                  pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            Cleanup.stopAndRemove(directory: root + "/" + entry)
        }
    }

    // MARK: Exit

    /// Stopping at exit: `atexit` for an orderly end, a watchdog shell for a killed process.
    enum Cleanup {
        private static let directories = NIOLockedValueBox<[String]>([])

        static func register(directory: String) {
            let first = directories.withLockedValue { list in
                list.append(directory)
                return list.count == 1
            }
            if first { atexit { Cleanup.stopAll() } }
        }

        static func stopAll() {
            for directory in directories.withLockedValue({ $0 }) { stopAndRemove(directory: directory) }
        }

        /// SIGQUIT is PostgreSQL's immediate shutdown: the postmaster and its children end at once,
        /// which is all a throwaway cluster needs.
        static func stopAndRemove(directory: String) {
            if let pidFile = try? String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8),
               let line = pidFile.split(separator: "\n").first, let pid = Int32(line.trimmingCharacters(in: .whitespaces)) {
                kill(pid, SIGQUIT)
                for _ in 0..<100 where kill(pid, 0) == 0 { usleep(10_000) }
            }
            try? FileManager.default.removeItem(atPath: directory)
        }

        /// A detached shell that outlives a killed process: once this pid is gone, it stops the
        /// postmaster and removes the folder.
        static func watch(directory: String) {
            let script = """
                while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done
                pid=$(head -n 1 '\(directory)/data/postmaster.pid' 2>/dev/null) && kill -QUIT "$pid" 2>/dev/null
                sleep 1; rm -rf '\(directory)'
                """
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", script]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try? process.run()
        }
    }
}

/// Where PostgreSQL's server programs are: `$PGMODEL_PG_BINDIR`, Debian's `/usr/lib/postgresql/<newest>/bin`,
/// or the `PATH`.
package struct PostgresBinaries {
    let directory: String
    let majorVersion: String

    func path(_ program: String) -> String { directory + "/" + program }

    package static func find(environment: [String: String] = ProcessInfo.processInfo.environment,
                     debian: String = "/usr/lib/postgresql") throws -> PostgresBinaries {
        var candidates: [String] = []
        if let directory = environment["PGMODEL_PG_BINDIR"], !directory.isEmpty { candidates.append(directory) }
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: debian)) ?? [])
            .compactMap { Int($0) }.sorted(by: >)
        candidates += versions.map { "\(debian)/\($0)/bin" }
        candidates += (environment["PATH"] ?? "").split(separator: ":").map(String.init)
        for directory in candidates where ["initdb", "pg_ctl", "postgres", "psql"].allSatisfy({
            FileManager.default.isExecutableFile(atPath: directory + "/" + $0)
        }) {
            return PostgresBinaries(directory: directory, majorVersion: Self.version(of: directory))
        }
        throw PGModelError(.invalidConfiguration,
            "an isStoredInMemoryOnly store without a URL runs a private PostgreSQL, but PostgreSQL's server programs "
            + "(initdb, pg_ctl, postgres) are not installed: install them (Debian/Ubuntu: apt-get install postgresql), "
            + "set PGMODEL_PG_BINDIR to their folder, or set DATABASE_URL to a PostgreSQL server to use")
    }

    /// The major version `postgres --version` reports ("15"), part of the template's name.
    private static func version(of directory: String) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: directory + "/postgres")
        process.arguments = ["--version"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return "unknown" }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let number = output.split(separator: " ").last.map(String.init) ?? "unknown"
        return String(number.split(separator: ".").first ?? "unknown").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Who runs the cluster: this process's user, or `postgres` when this process is root (PostgreSQL
/// refuses to run as root).
struct ClusterOwner {
    let name: String
    let runsAsOtherUser: Bool

    static func current() -> ClusterOwner {
        if geteuid() == 0 { return ClusterOwner(name: "postgres", runsAsOtherUser: true) }
        let name = getpwuid(geteuid()).flatMap { String(validatingCString: $0.pointee.pw_name) } ?? "user\(geteuid())"
        return ClusterOwner(name: name, runsAsOtherUser: false)
    }

    /// A folder only the owner can enter, under the temporary directory.
    func privateDirectory(named name: String) throws -> String {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let path = (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/" + name
        if !FileManager.default.fileExists(atPath: path) { try makeDirectory(path) }
        return path
    }

    func makeDirectory(_ path: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false,
                                                    attributes: [.posixPermissions: 0o700])
        } catch CocoaError.fileWriteFileExists {
            return
        } catch {
            if FileManager.default.fileExists(atPath: path) { return }
            throw PGModelError(.connectionFailed, "cannot create \(path) for the private PostgreSQL cluster: \(error.localizedDescription)")
        }
        if runsAsOtherUser { try run("/bin/chown", [name, path], asOwner: false) }
    }

    /// Runs `program` as the owner and waits; throws with its standard error's tail when it fails.
    func run(_ program: String, _ arguments: [String], asOwner: Bool = true) throws {
        // Foundation learns that a child ended when a socket the child inherited closes; `pg_ctl start`
        // leaves the server holding it, so the wait would never end. The shell closes every descriptor
        // above 2 before it runs the program.
        let closingDescriptors = #"for fd in /proc/$$/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null; done; exec "$@""#
        let command = ["/bin/bash", "-c", closingDescriptors, "pgmodel-ephemeral", program] + arguments
        let process = Process()
        if asOwner && runsAsOtherUser {
            process.executableURL = URL(fileURLWithPath: FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser")
                ? "/usr/sbin/runuser" : "/sbin/runuser")
            process.arguments = ["-u", name, "--"] + command
        } else {
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst())
        }
        // Standard error goes to a file, not a pipe: `pg_ctl start` leaves the server holding the
        // descriptors it inherited, so a pipe would never reach its end.
        let errorPath = FileManager.default.temporaryDirectory
            .appendingPathComponent("pgmodel-ephemeral-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).err").path
        guard FileManager.default.createFile(atPath: errorPath, contents: nil),
              let errors = FileHandle(forWritingAtPath: errorPath) else {
            throw PGModelError(.connectionFailed, "cannot create \(errorPath) for the private PostgreSQL cluster")
        }
        defer {
            try? errors.close()
            try? FileManager.default.removeItem(atPath: errorPath)
        }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw PGModelError(.connectionFailed, "cannot run \(program) for the private PostgreSQL cluster: \(error.localizedDescription)")
        }
        process.waitUntilExit()
        let message = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        guard process.terminationStatus == 0 else {
            let program = (program as NSString).lastPathComponent
            throw PGModelError(.connectionFailed, "\(program) failed for the private PostgreSQL cluster: "
                + message.split(separator: "\n").suffix(2).joined(separator: " / "))
        }
    }
}
