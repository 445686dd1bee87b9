import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOPosix
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
@_spi(PGModelInternals) import PGModelWire
import PostgresNIO
import Testing

/// Logins across connections: throttled per user name and per address, equal time for unknown names,
/// never queued behind data requests, never timed out while the server itself is slow, never logged
/// with their passwords.
@Suite("Server: logins")
struct LoginSecurityTests {
    static func hello(_ port: Int, _ user: String, _ password: String) async throws -> RawResponse {
        let client = try await RawProtocolClient.connect(port: port)
        defer { Task { await client.close() } }
        return try await RawProtocolTests.hello(client, user, password)
    }

    @Test("failed logins are throttled per address across connections: reconnecting does not reset the count")
    func perAddressAcrossConnections() async throws {
        let user = try await ServerTestHarness.makeUser("addr")
        try await ServerTestHarness.withRunningServer(configure: {
            $0.loginThrottle.freeFailuresPerAddress = 3
            $0.loginThrottle.freeFailuresPerUser = 1_000
            // A block that outlasts the test: with the default 1 s, a loaded machine's next connection and
            // hello could arrive after it had expired (it did, in CI, once).
            $0.loginThrottle.initialDelay = .seconds(30)
        }) { _, port async throws in
            for index in 0..<4 {
                #expect(try await Self.hello(port, "nobody_\(index)_\(ServerTestHarness.uniqueSuffix())", "x").code == "authentication_failed")
            }
            // Each guess came on a new connection; the address is held back all the same, even with the right password.
            let refused = try await Self.hello(port, user.name, "secret")
            #expect(refused.code == "rate_limited", "\(refused)")
            #expect(refused.text.contains("try again in"))
        }
    }

    @Test("failed logins are throttled per user name; an address the user logged in from is not held back by them")
    func perUserNameAcrossConnections() async throws {
        let user = try await ServerTestHarness.makeUser("name")
        let target = try await ServerTestHarness.makeUser("target")
        try await ServerTestHarness.withRunningServer(configure: {
            $0.loginThrottle.freeFailuresPerUser = 2
            $0.loginThrottle.freeFailuresPerAddress = 1_000
            // A block that outlasts the test: with the default 1 s, a loaded machine's next connection and
            // hello could arrive after it had expired (it did, in CI, once).
            $0.loginThrottle.initialDelay = .seconds(30)
        }) { _, port async throws in
            #expect(try await Self.hello(port, user.name, "secret").ok == true)
            for _ in 0..<3 {
                #expect(try await Self.hello(port, target.name, "wrong").code == "authentication_failed")
            }
            #expect(try await Self.hello(port, target.name, "secret").code == "rate_limited",
                    "the name is held back, and the password is not even checked")
            #expect(try await Self.hello(port, user.name, "secret").ok == true, "other names are not affected")
        }
        // The user logged in from this address first: the guesses after that do not count against the name here.
        try await ServerTestHarness.withRunningServer(configure: {
            $0.loginThrottle.freeFailuresPerUser = 2
            $0.loginThrottle.freeFailuresPerAddress = 1_000
            // A block that outlasts the test: with the default 1 s, a loaded machine's next connection and
            // hello could arrive after it had expired (it did, in CI, once).
            $0.loginThrottle.initialDelay = .seconds(30)
        }) { _, port async throws in
            #expect(try await Self.hello(port, target.name, "secret").ok == true)
            for _ in 0..<5 {
                #expect(try await Self.hello(port, target.name, "wrong").code == "authentication_failed")
            }
            #expect(try await Self.hello(port, target.name, "secret").ok == true)
        }
    }

    @Test("an unknown user name costs the same bcrypt as a wrong password: timing does not reveal which names exist")
    func unknownNamesTakeAsLong() async throws {
        let user = try await ServerTestHarness.makeUser("timing")
        try await ServerTestHarness.withDatabase { engine, connection async throws in
            func attempt(_ name: String) async -> Duration {
                let started = ContinuousClock.now
                await #expect(throws: PGModelError.self) {
                    _ = try await engine.authenticate(user: name, password: "wrong", on: connection)
                }
                return ContinuousClock.now - started
            }
            // Interleaved, the fastest of each: both kinds meet the same load (the whole integration
            // phase runs beside this test), so neither is measured only while the machine is busier.
            let unknown = "nobody_\(ServerTestHarness.uniqueSuffix())"
            var wrongPassword = Duration.seconds(60)
            var unknownName = Duration.seconds(60)
            // 32 of each: on two busy cores a run of 16 once found no quiet moment for one kind.
            for _ in 0..<32 {
                wrongPassword = min(wrongPassword, await attempt(user.name))
                unknownName = min(unknownName, await attempt(unknown))
            }
            // Without the stand-in hash an unknown name skips bcrypt and answers several times faster.
            #expect(unknownName * 2 > wrongPassword, "unknown \(unknownName), wrong password \(wrongPassword)")
            #expect(try await engine.authenticate(user: user.name, password: "secret", on: connection).name == user.name)
        }
    }

    @Test("a login is answered while every data connection is busy: logins do not queue behind the data pool")
    func loginsDoNotQueueBehindData() async throws {
        let schema = "login_\(ServerTestHarness.uniqueSuffix())"
        let entity = ServerTestHarness.uniqueEntity("Busy")
        try await ServerTestHarness.register(json: try RawProtocolTests.schemaJSON(entity), schemaName: schema)
        let admin = try await ServerTestHarness.makeUser("busy", admin: true)
        let other = try await ServerTestHarness.makeUser("late")
        try await ServerTestHarness.withRunningServer(schemaName: schema, configure: { $0.maxDatabaseConnections = 1 }) { _, port async throws in
            let busy = try await RawProtocolClient.connect(port: port)
            defer { Task { await busy.close() } }
            #expect(try await RawProtocolTests.hello(busy, admin.name, "secret").ok == true)
            let lock = try await DeadlineTests.TableLock("\"\(schema)\".\"\(Naming.snakeCase(entity))\"")
            // The only data connection now waits on the lock.
            try await busy.sendLine(#"{"id":2,"op":"fetch","entity":"\#(entity)"}"#)
            let waitedSince = ContinuousClock.now
            while try await DeadlineTests.sessionsWaitingOnLocks() == 0, ContinuousClock.now - waitedSince < .seconds(20) {
                try await Task.sleep(for: .milliseconds(20))
            }
            let login = try await Self.hello(port, other.name, "secret")
            try await lock.release()
            #expect(login.ok == true, "\(login)")
            #expect(try RawResponse(try await busy.readLine()).ok == true, "the blocked fetch finishes after the lock goes")
        }
    }

    @Test("a hello the server is still checking when the login timeout passes is answered, not cut off")
    func slowCheckIsNotHeldAgainstTheClient() async throws {
        let user = try await LoginTestDatabase.makeUser("slow")
        // 3 s: both hellos must be read within it while every suite runs at once on two cores.
        let loginTimeout = Duration.seconds(3)
        try await ServerTestHarness.withRunningServer(loginTimeout: loginTimeout, configure: {
            $0.databaseURL = (try? LoginTestDatabase.url) ?? ""
        }) { _, port async throws in
            // Every password check waits on the lock for longer than the login timeout. Taken before the
            // clients connect: the login timeout runs from the connection, and taking the lock can itself
            // take a second while CI runs every suite at once.
            let lock = try await LoginTestDatabase.lockUsers()
            let client = try await RawProtocolClient.connect(port: port)
            defer { Task { await client.close() } }
            let failing = try await RawProtocolClient.connect(port: port)
            defer { Task { await failing.close() } }
            try await client.sendLine(#"{"id":1,"op":"hello","user":"\#(user.name)","password":"secret","protocol":1}"#)
            try await failing.sendLine(#"{"id":1,"op":"hello","user":"\#(user.name)","password":"wrong","protocol":1}"#)
            try await Task.sleep(for: loginTimeout + .milliseconds(500))
            try await lock.release()

            let answer = try RawResponse(try await client.readLine())
            #expect(answer.ok == true, "\(answer)")
            #expect(try await client.request(#"{"id":2,"op":"ping"}"#).ok == true, "logged in: the timeout no longer applies")
            // A failed check past the deadline: its answer, then the timeout line, then the close.
            let refused = try RawResponse(try await failing.readLine())
            #expect(refused.code == "authentication_failed", "\(refused)")
            #expect(try RawResponse(try await failing.readLine()).code == "timeout")
            try await failing.expectClosed()
        }
    }

    @Test("passwords never reach the logs; audited operations name the acting user")
    func passwordsNeverLogged() async throws {
        let admin = try await ServerTestHarness.makeUser("audit", password: "Adm1n-Pa55-word", admin: true)
        let schema = "audit_\(ServerTestHarness.uniqueSuffix())"
        let entity = ServerTestHarness.uniqueEntity("Audit")
        let capture = LogCapture()
        let logger = Logger(label: "pgmodel.capture") { _ in capture }
        try await ServerTestHarness.withRunningServer(schemaName: schema, logger: logger) { _, port in
            #expect(try await Self.hello(port, admin.name, "Wr0ng-Gue55-word").code == "authentication_failed")
            #expect(try await Self.hello(port, "nobody_\(ServerTestHarness.uniqueSuffix())", "Wr0ng-Gue55-word").code == "authentication_failed")
            let client = try await RawProtocolClient.connect(port: port)
            defer { Task { await client.close() } }
            #expect(try await RawProtocolTests.hello(client, admin.name, "Adm1n-Pa55-word").ok == true)
            // Creating tables may be slow on a loaded machine: a long read, not the client's 15 s default.
            try await client.sendLine(#"{"id":2,"op":"register","schema":\#(try RawProtocolTests.schemaJSON(entity))}"#)
            let register = try RawResponse(try await client.readLine(timeout: .seconds(240)))
            #expect(register.ok == true, "\(register)")
        }
        let text = capture.text
        #expect(text.contains("login failed"), "the capture works")
        #expect(!text.contains("Wr0ng-Gue55-word"))
        #expect(!text.contains("Adm1n-Pa55-word"))
        #expect(!text.contains("pgmodel:pgmodel@"), "nor the database password")
        #expect(text.contains("audited operation") && text.contains("op=register") && text.contains("user=\(admin.name)"), "\(text)")
    }
}

/// Every log line of a logger, as text.
final class LogCapture: LogHandler, Sendable {
    private let lines = NIOLockedValueBox<[String]>([])
    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }
    var logLevel: Logger.Level {
        get { .trace }
        set {}
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    func log(event: LogEvent) {
        let fields = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        lines.withLockedValue { $0.append("\(event.level) \(event.message) \(fields)") }
    }

    var text: String { lines.withLockedValue { $0.joined(separator: "\n") } }
}

/// A database of its own for tests that lock `pgmodel.users`, so that logins elsewhere in the test run
/// do not wait on that lock.
enum LoginTestDatabase {
    static let name = "pgmodel_test_logins"
    static var url: String {
        get throws {
            guard var components = URLComponents(string: try ServerTestHarness.databaseURL()) else {
                throw PGModelError(.invalidConfiguration, "unparsable PGMODEL_TEST_DATABASE_URL")
            }
            components.path = "/\(name)"
            return components.string ?? ""
        }
    }

    private static let created = NIOLockedValueBox<Task<Void, any Error>?>(nil)

    /// Creates the database once per run (if missing) and bootstraps its system tables.
    static func prepare() async throws {
        let task = created.withLockedValue { existing in
            if let existing { return existing }
            let task = Task {
                try await ServerTestHarness.withDatabase { _, connection in
                    let rows = try await connection.connection.query("SELECT 1 FROM pg_database WHERE datname = \(name)", logger: ServerTestHarness.logger)
                    if try await rows.collect().isEmpty {
                        _ = try await connection.connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: ServerTestHarness.logger)
                    }
                }
                try await withConnection { connection in
                    try await PostgresStoreEngine(schemaName: "public", logger: ServerTestHarness.logger).bootstrap(on: EngineConnection(connection))
                }
            }
            existing = task
            return task
        }
        try await task.value
    }

    static func withConnection<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        let configuration = try PostgresStoreConfiguration.parse(try url)
        let connection = try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration.connection, id: 7, logger: ServerTestHarness.logger)
        do {
            let result = try await body(connection)
            try await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }

    static func makeUser(_ prefix: String) async throws -> AuthenticatedUser {
        try await prepare()
        return try await withConnection { connection in
            try await PostgresStoreEngine(schemaName: "public", logger: ServerTestHarness.logger)
                .createUser(name: "\(prefix)_\(ServerTestHarness.uniqueSuffix())", password: "secret", isAdmin: false, on: EngineConnection(connection))
        }
    }

    /// Holds an exclusive lock on `pgmodel.users` until `release()`.
    static func lockUsers() async throws -> DatabaseLock {
        let configuration = try PostgresStoreConfiguration.parse(try url)
        let connection = try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration.connection, id: 8, logger: ServerTestHarness.logger)
        _ = try await connection.query("BEGIN", logger: ServerTestHarness.logger)
        _ = try await connection.query("LOCK TABLE pgmodel.users IN ACCESS EXCLUSIVE MODE", logger: ServerTestHarness.logger)
        return DatabaseLock(connection: connection)
    }

    struct DatabaseLock: Sendable {
        let connection: PostgresConnection
        func release() async throws {
            _ = try await connection.query("ROLLBACK", logger: ServerTestHarness.logger)
            try await connection.close()
        }
    }
}
