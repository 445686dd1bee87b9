import Foundation
import Logging
import NIOPosix
@_spi(PGModelInternals) import PGModel
import PostgresNIO

/// The side-by-side benchmark: one table of ten columns, the same rows, five contenders (PGModel
/// on the direct store and through the service, raw PostgresNIO, Fluent 4, `psql \copy`), each workload
/// run by every contender in one round, the order rotated every round, medians over the rounds.
/// Then `enumerate` over a larger table, and the peak memory of one large save (`MemoryProbe`).
struct ComparisonSuite {
    struct Options: Sendable {
        var rows = 20_000
        var rounds = 5
        var pages = 100
        var pageSize = 100
        var pointCalls = 1000
        var largeRows = 200_000
        var saveRows = 100_000

        static let quick = Options(rows: 2000, rounds: 2, pages: 20, pageSize: 100, pointCalls: 200, largeRows: 20_000, saveRows: 10_000)
    }

    let table: SuiteTable
    let options: Options
    let psql: String

    func run() async throws -> SuiteReport {
        var report = SuiteReport(options: options)
        let admin = try await table.connect()
        // One service user for the run; its password is hashed as the service expects (pgcrypto's bcrypt).
        let userName = "bench_" + UUID().uuidString.lowercased().prefix(8)
        let password = "secret"
        var binds = PostgresBindings()
        binds.append(userName)
        binds.append(password)
        _ = try await admin.query(PostgresQuery(
            unsafeSQL: "INSERT INTO pgmodel.users (name, password_hash) VALUES ($1, crypt($2, gen_salt('bf', 4)))", binds: binds),
            logger: SuiteTable.logger).collect()

        let copy = CopyContender(table: table, psql: psql)
        let fluent = FluentContender(table: table)
        let contenders: [any SuiteContender] = [
            PGModelContender(table: table),
            ServiceContender(table: table, userName: userName, password: password),
            RawContender(table: table),
            fluent,
            copy,
        ]
        report.contenders = contenders.map { (key: $0.key, title: $0.title) }
        let rows = RecordRow.make(count: options.rows)
        try copy.writeCSV(rows)
        defer { copy.removeCSV() }
        let clock = ContinuousClock()

        for round in 0..<options.rounds {
            let order = (0..<contenders.count).map { contenders[($0 + round) % contenders.count] }
            log("round \(round + 1)/\(options.rounds): \(order.map(\.key).joined(separator: " → "))")
            for contender in order { try await contender.prepare() }
            do {
                for contender in order {
                    let start = clock.now
                    try await contender.insert(rows)
                    report.add(contender.key, .insert, milliseconds(clock.now - start))
                }
                for contender in order { try await contender.analyze() }
                let startUp = clock.now
                try copy.startUp()
                report.add(SuiteReport.psqlStartUpKey, .insert, milliseconds(clock.now - startUp))
                // The same random ranks for everyone in this round.
                let ranks = (0..<options.pointCalls).map { _ in Int.random(in: 0..<options.rows) }
                let spacing = options.rows / options.pages
                for contender in order where contender.workloads.contains(.fetchAll) {
                    // Untimed: the first statement of a connection pays for catalog lookups and plans.
                    for rank in ranks.prefix(20) { _ = try await contender.point(rank: rank) }
                    let start = clock.now
                    let count = try await contender.fetchAll()
                    report.add(contender.key, .fetchAll, milliseconds(clock.now - start))
                    try check(count, options.rows, contender, .fetchAll)
                }
                for contender in order where contender.workloads.contains(.pages) {
                    let start = clock.now
                    for page in 0..<options.pages {
                        let count = try await contender.page(lower: page * spacing, upper: page * spacing + options.pageSize)
                        try check(count, options.pageSize, contender, .pages)
                    }
                    report.add(contender.key, .pages, milliseconds(clock.now - start))
                }
                // Call by call, each rank by every contender in a rotating order: a point fetch is a few
                // hundred microseconds, and the machine's speed drifts over the seconds that a thousand of
                // them take, which compared one contender's run with another's taken later.
                let pointers = order.filter { $0.workloads.contains(.point) }
                var calls = pointers.map { _ in [Double]() }
                for index in calls.indices { calls[index].reserveCapacity(ranks.count) }
                for (call, rank) in ranks.enumerated() {
                    for step in pointers.indices {
                        let index = (call + step) % pointers.count
                        let start = clock.now
                        let count = try await pointers[index].point(rank: rank)
                        calls[index].append(milliseconds(clock.now - start) * 1000)
                        try check(count, 1, pointers[index], .point)
                    }
                }
                for (contender, times) in zip(pointers, calls) { report.add(contender.key, .point, percentile(times, 0.5)) }
                // The floor under any service's point fetch: raw's select through a bare line server.
                if let raw = order.lazy.compactMap({ $0 as? RawContender }).first {
                    let (floor, driver) = try await floorPoint(sql: raw.pointSQL, ranks: ranks)
                    report.add(SuiteReport.floorKey, .point, floor)
                    report.add(SuiteReport.floorDriverKey, .point, driver)
                }
            } catch {
                for contender in order { try? await contender.teardown() }
                throw error
            }
            for contender in order { try await contender.teardown() }
        }
        try await fluent.close()

        log("enumerate over \(options.largeRows) rows")
        report.large = try await LargeTableBenchmark(table: table, rows: options.largeRows, rounds: options.rounds).run()
        log("one save of \(options.saveRows) models, in a child process")
        report.save = try MemoryProbe.spawn(["save", String(options.saveRows)])

        var remove = PostgresBindings()
        remove.append(userName)
        _ = try? await admin.query(PostgresQuery(unsafeSQL: "DELETE FROM pgmodel.users WHERE name = $1", binds: remove),
                                   logger: SuiteTable.logger).collect()
        try await admin.close()
        return report
    }

    /// The p50s (µs) of `ranks` fetched through a ``PointFloor`` running `sql` on its own loop's
    /// connection, and of the same select on that connection without the line server, alternately.
    private func floorPoint(sql: String, ranks: [Int]) async throws -> (floor: Double, driver: Double) {
        let floor = try await PointFloor.start(configuration: table.connectionConfiguration, sql: sql, logger: SuiteTable.logger)
        let client: PointFloorClient
        do {
            client = try await PointFloorClient.connect(port: floor.port, group: MultiThreadedEventLoopGroup.singleton)
        } catch {
            await floor.close()
            throw error
        }
        do {
            for rank in ranks.prefix(20) {
                _ = try await client.rows(key: rank)
                _ = try await floor.select(key: rank, sql: sql, logger: SuiteTable.logger)
            }
            let clock = ContinuousClock()
            var served: [Double] = []
            var alone: [Double] = []
            for rank in ranks {
                var start = clock.now
                let count = try await client.rows(key: rank)
                served.append(milliseconds(clock.now - start) * 1000)
                start = clock.now
                let direct = try await floor.select(key: rank, sql: sql, logger: SuiteTable.logger)
                alone.append(milliseconds(clock.now - start) * 1000)
                guard count == 1, direct == 1 else { throw SuiteError("the line-server floor: point returned \(count) and \(direct) rows, not 1") }
            }
            await client.close()
            await floor.close()
            return (percentile(served, 0.5), percentile(alone, 0.5))
        } catch {
            await client.close()
            await floor.close()
            throw error
        }
    }

    private func check(_ count: Int, _ expected: Int, _ contender: any SuiteContender, _ workload: SuiteWorkload) throws {
        guard count == expected else {
            throw SuiteError("\(contender.title): \(workload.rawValue) returned \(count) rows, not \(expected)")
        }
    }

    private func log(_ message: String) {
        FileHandle.standardError.write(Data("[bench] \(message)\n".utf8))
    }
}

func milliseconds(_ duration: Duration) -> Double { durationSeconds(duration) * 1000 }
