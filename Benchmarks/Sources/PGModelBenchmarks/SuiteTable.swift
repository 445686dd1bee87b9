import Foundation
import Logging
@_spi(PGModelInternals) import PGModel
import PostgresNIO

/// Where the side-by-side suite's tables live and how they are made and removed: one fresh schema per
/// contender and round, so no contender reads another's rows, caches or dead tuples.
struct SuiteTable: Sendable {
    static let name = "bench_record"
    /// The columns in the order every contender writes and reads them.
    static let columns = ["id", "name", "category", "price", "quantity", "created", "active", "note", "score", "rank"]

    /// The server of DATABASE_URL, without PGModel's `schema` parameter (psql and PostgresNIO reject it).
    let host: String
    let port: Int
    let user: String
    let password: String?
    let database: String
    /// DATABASE_URL as given: PGModel's containers and the service take it with `?schema=`.
    let url: URL

    init(databaseURL: URL) throws {
        guard let components = URLComponents(url: databaseURL, resolvingAgainstBaseURL: false), let host = components.host else {
            throw PGModelError(.invalidConfiguration, "DATABASE_URL has no host")
        }
        self.host = host
        port = components.port ?? 5432
        user = components.user ?? "postgres"
        password = components.password
        database = String(components.path.dropFirst())
        var plain = components
        plain.queryItems = nil
        url = plain.url ?? databaseURL
    }

    var connectionConfiguration: PostgresConnection.Configuration {
        PostgresConnection.Configuration(host: host, port: port, username: user, password: password, database: database, tls: .disable).pgmodelSession()
    }

    /// `postgres://…` for psql: the same server and credentials, no PGModel parameters.
    var libpqURL: String { url.absoluteString }

    func connect(id: Int = 1) async throws -> PostgresConnection {
        try await PostgresConnection.connect(configuration: connectionConfiguration, id: id, logger: SuiteTable.logger)
    }

    /// The configuration of the suite's large-table and save containers: one fetch of a million rows
    /// takes longer than the default 30 s deadline on a loaded 2-core machine.
    static func configuration(_ url: URL) -> ModelConfiguration {
        var configuration = ModelConfiguration(url: url)
        configuration.requestTimeout = .seconds(600)
        return configuration
    }

    /// PGModel's store URL for `schema`.
    func storeURL(schema: String) -> URL {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "schema", value: schema)]
        return components.url!
    }

    static let logger = Logger(label: "bench.suite")

    static func freshSchema(_ contender: String) -> String {
        "bench_cmp_\(contender)_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(8)
    }

    /// The table as a careful hand-written schema has it: the same types PGModel's DDL gives these
    /// attributes (text, double precision, bigint, timestamptz, boolean), `note` nullable, and the index on
    /// `rank` that `#Index` declares for the PGModel model.
    static func createStatements(schema: String) -> [String] {
        [
            "CREATE SCHEMA \"\(schema)\"",
            """
            CREATE TABLE "\(schema)"."\(name)" (id uuid PRIMARY KEY, name text NOT NULL, category text NOT NULL, \
            price double precision NOT NULL, quantity bigint NOT NULL, created timestamptz NOT NULL, \
            active boolean NOT NULL, note text, score double precision NOT NULL, rank bigint NOT NULL)
            """,
            "CREATE INDEX ON \"\(schema)\".\"\(name)\" (rank)",
        ]
    }

    func execute(_ statements: [String], on connection: PostgresConnection) async throws {
        for sql in statements {
            _ = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: SuiteTable.logger).collect()
        }
    }

    /// Drops a schema and, for a PGModel store, the rows PGModel keeps about it in its own tables (its
    /// registration and the history of every save), so repeated runs leave the shared database as it was.
    func drop(schema: String, on connection: PostgresConnection) async throws {
        try await execute(["DROP SCHEMA IF EXISTS \"\(schema)\" CASCADE"], on: connection)
        for table in ["transactions", "entities", "schema_versions", "history_deletions", "shares"] {
            var binds = PostgresBindings()
            binds.append(schema)
            // A table that an older database lacks has nothing to clean.
            _ = try? await connection.query(
                PostgresQuery(unsafeSQL: "DELETE FROM pgmodel.\(table) WHERE schema_name = $1", binds: binds),
                logger: SuiteTable.logger).collect()
        }
    }

    /// `INSERT … SELECT FROM unnest(…)`: the raw driver's fastest multi-row insert, one statement and one
    /// round trip. PostgresNIO has no array of optionals, so `note` travels as text with '' for NULL (the
    /// generated notes are never empty). `entity` is set when the table is a PGModel table.
    func unnestInsert(_ rows: [RecordRow], schema: String, entity: String? = nil, on connection: PostgresConnection) async throws {
        var binds = PostgresBindings(capacity: 11)
        binds.append(rows.map(\.id))
        binds.append(rows.map(\.name))
        binds.append(rows.map(\.category))
        binds.append(rows.map(\.price))
        binds.append(rows.map(\.quantity))
        binds.append(rows.map(\.created))
        binds.append(rows.map(\.active))
        binds.append(rows.map { $0.note ?? "" })
        binds.append(rows.map(\.score))
        binds.append(rows.map(\.rank))
        var columns = SuiteTable.columns.map { "\"\($0)\"" }.joined(separator: ", ")
        var values = "u.id, u.name, u.category, u.price, u.quantity, u.created, u.active, NULLIF(u.note, ''), u.score, u.rank"
        if let entity {
            binds.append(entity)
            columns += ", \"entity\""
            values += ", $11"
        }
        let sql = """
            INSERT INTO "\(schema)"."\(SuiteTable.name)" (\(columns)) SELECT \(values) FROM unnest(\
            $1::uuid[], $2::text[], $3::text[], $4::float8[], $5::int8[], $6::timestamptz[], $7::bool[], $8::text[], \
            $9::float8[], $10::int8[]) AS u(id, name, category, price, quantity, created, active, note, score, rank)
            """
        _ = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: SuiteTable.logger).collect()
    }
}
