import FluentKit
import FluentPostgresDriver
import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// Fluent 4 (FluentKit with its PostgreSQL driver) used as its documentation shows, outside Vapor: a
/// `Databases` with one pooled connection on one event loop, the schema picked by `search_path`.
final class FluentContender: SuiteContender {
    let key = "fluent"
    let title = "Fluent 4"
    let workloads: Set<SuiteWorkload> = [.insert, .fetchAll, .pages, .point]
    /// PostgreSQL takes at most 65,535 parameters a statement; ten columns a row allow 6,553 rows. Fluent's
    /// `[Model].create(on:)` sends one multi-row INSERT, so a large insert is cut into such statements
    /// inside one transaction — the nearest Fluent has to one save of N models.
    static let rowsPerStatement = 5000
    private let table: SuiteTable
    private let threadPool = NIOThreadPool(numberOfThreads: 1)
    private var databases: Databases?
    private var database: (any Database)?
    private var admin: PostgresConnection?
    private var schema = ""

    init(table: SuiteTable) {
        self.table = table
        threadPool.start()
    }

    func prepare() async throws {
        let admin = try await table.connect()
        self.admin = admin
        schema = SuiteTable.freshSchema(key)
        try await table.execute(SuiteTable.createStatements(schema: schema), on: admin)
        let group = MultiThreadedEventLoopGroup.singleton
        let databases = Databases(threadPool: threadPool, on: group)
        databases.use(.postgres(configuration: SQLPostgresConfiguration(coreConfiguration: table.connectionConfiguration, searchPath: [schema])),
                      as: .psql)
        self.databases = databases
        // One event loop, so every query reuses its single pooled connection, as the raw contender does.
        var quiet = Logger(label: "bench.fluent")
        quiet.logLevel = .error
        database = databases.database(.psql, logger: quiet, on: group.next())
    }

    func insert(_ rows: [RecordRow]) async throws {
        let models = rows.map(FluentRecord.init)
        try await live().transaction { transaction in
            for start in stride(from: 0, to: models.count, by: FluentContender.rowsPerStatement) {
                try await Array(models[start..<min(models.count, start + FluentContender.rowsPerStatement)]).create(on: transaction)
            }
        }
    }

    func fetchAll() async throws -> Int {
        try await FluentRecord.query(on: live()).all().count
    }

    func page(lower: Int, upper: Int) async throws -> Int {
        try await FluentRecord.query(on: live()).filter(\.$rank >= lower).filter(\.$rank < upper).sort(\.$rank).all().count
    }

    func point(rank: Int) async throws -> Int {
        try await FluentRecord.query(on: live()).filter(\.$rank == rank).first() == nil ? 0 : 1
    }

    func analyze() async throws {
        guard let admin else { throw CancellationError() }
        try await table.execute(["ANALYZE \"\(schema)\".\"\(SuiteTable.name)\""], on: admin)
    }

    func teardown() async throws {
        await databases?.shutdownAsync()
        databases = nil
        database = nil
        if let admin {
            try await table.drop(schema: schema, on: admin)
            try await admin.close()
        }
        admin = nil
    }

    func close() async throws {
        try await threadPool.shutdownGracefully()
    }

    private func live() throws -> any Database {
        guard let database else { throw CancellationError() }
        return database
    }
}
