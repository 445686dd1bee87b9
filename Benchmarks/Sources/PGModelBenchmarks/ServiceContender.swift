import Foundation
import Logging
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelServer
import PostgresNIO

/// PGModel through the service (`pgmodel://`): an in-process `LineServer` on loopback, as RLSFetch.swift
/// runs it, and a client container logged in as one user, whose rows the table's row-level security
/// policies let through. Each round gets a fresh schema and a server for it.
final class ServiceContender: SuiteContender {
    let key = "service"
    let title = "PGModel (pgmodel://)"
    let workloads: Set<SuiteWorkload> = [.insert, .fetchAll, .pages, .point]
    private let table: SuiteTable
    private let userName: String
    private let password: String
    private var direct: ModelContainer?
    private var remote: ModelContainer?
    private var server: Task<Void, any Error>?
    private var admin: PostgresConnection?
    private var schema = ""

    init(table: SuiteTable, userName: String, password: String) {
        self.table = table
        self.userName = userName
        self.password = password
    }

    func prepare() async throws {
        admin = try await table.connect()
        schema = SuiteTable.freshSchema(key)
        let url = table.storeURL(schema: schema)
        // The tables exist before users come: created by the direct store, as at deploy time.
        direct = try blocking { try ModelContainer(for: BenchRecord.self, configurations: ModelConfiguration(url: url)) }
        var quiet = Logger(label: "bench.server")
        quiet.logLevel = .error
        let server = try LineServer(configuration: LineServerConfiguration(
            databaseURL: table.libpqURL, host: "127.0.0.1", port: 0, schemaName: schema), logger: quiet)
        self.server = Task { try await server.run() }
        let port = try await server.listeningPort()
        guard let remoteURL = URL(string: "pgmodel://\(userName):\(password)@127.0.0.1:\(port)") else {
            throw PGModelError(.invalidConfiguration, "cannot form the service URL")
        }
        remote = try blocking { try ModelContainer(for: BenchRecord.self, configurations: ModelConfiguration(url: remoteURL)) }
    }

    func insert(_ rows: [RecordRow]) async throws {
        let remote = try live()
        // One save, as on the direct store: longer than the service's 1 MiB request line, it goes in parts
        // that the server runs as one transaction (PROTOCOL.md §4, A save in parts).
        try blocking {
            let context = ModelContext(remote)
            for row in rows { context.insert(BenchRecord(row)) }
            try context.save()
        }
    }

    func fetchAll() async throws -> Int {
        let remote = try live()
        return try blocking { try ModelContext(remote).fetch(FetchDescriptor<BenchRecord>()).count }
    }

    func page(lower: Int, upper: Int) async throws -> Int {
        let remote = try live()
        return try blocking {
            let descriptor = FetchDescriptor<BenchRecord>(
                predicate: #Predicate { $0.rank >= lower && $0.rank < upper }, sortBy: [SortDescriptor(\.rank)])
            return try ModelContext(remote).fetch(descriptor).count
        }
    }

    func point(rank: Int) async throws -> Int {
        let remote = try live()
        return try blocking {
            var descriptor = FetchDescriptor<BenchRecord>(predicate: #Predicate { $0.rank == rank })
            descriptor.fetchLimit = 1
            return try ModelContext(remote).fetch(descriptor).count
        }
    }

    func analyze() async throws {
        guard let admin else { throw CancellationError() }
        try await table.execute(["ANALYZE \"\(schema)\".\"\(SuiteTable.name)\""], on: admin)
    }

    func teardown() async throws {
        if let remote { await remote.close() }
        if let direct { await direct.close() }
        remote = nil
        direct = nil
        server?.cancel()
        _ = try? await server?.value
        server = nil
        if let admin {
            try await table.drop(schema: schema, on: admin)
            try await admin.close()
        }
        admin = nil
    }

    private func live() throws -> ModelContainer {
        guard let remote else { throw CancellationError() }
        return remote
    }
}
