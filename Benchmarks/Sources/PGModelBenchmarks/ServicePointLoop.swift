import Foundation
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres

/// `--service-point [--remote-only | --direct-only]`: point fetches by an indexed column as the stores'
/// `table` (no models), on the direct store and through an in-process service, call by call; p50s. With
/// `--remote-only` or `--direct-only` only one of them, for `perf stat` / `perf record` of each per call.
func runServicePointLoop(databaseURL: URL, rows: Int, calls: Int, remoteOnly: Bool, directOnly: Bool, models: Bool = false,
                          binary: String? = nil) async throws {
    let stores = try await ServiceBenchStores.open(databaseURL: databaseURL, rows: rows, label: "point", binary: binary)
    if models { return try await runModelPointLoop(stores, rows: rows, calls: calls, remoteOnly: remoteOnly, directOnly: directOnly) }
    let (remote, direct, entity) = (stores.remote, stores.direct, stores.entity)
    func point(_ rank: Int) -> FetchRequest {
        FetchRequest(entity: entity, predicate: .compare(.equal, .key("rank"), .value(.int(Int64(rank)))), limit: 1)
    }
    let (directTimes, remoteTimes) = try await alternately(calls: calls, rows: rows, remoteOnly: remoteOnly, directOnly: directOnly,
                                                           direct: { try await direct.fetchTable(point($0)).rows.count },
                                                           remote: { try await remote.fetchTable(point($0)).rows.count })
    print("point fetch (table, \(calls) calls): direct store \(p50(directTimes)); service \(p50(remoteTimes))")
    try await stores.close()
}

/// `--service-point --models`: the same calls as models, through `ModelContext.fetch` on two containers
/// (SwiftData's synchronous API, as the suite's point workload calls it).
private func runModelPointLoop(_ stores: ServiceBenchStores, rows: Int, calls: Int, remoteOnly: Bool, directOnly: Bool) async throws {
    let direct = try ModelContainer(for: BenchProduct.self, configurations: ModelConfiguration(url: stores.directURL))
    let remote = try ModelContainer(for: BenchProduct.self, configurations: ModelConfiguration(url: stores.serviceURL))
    func point(_ container: ModelContainer, _ rank: Int) throws -> Int {
        var descriptor = FetchDescriptor<BenchProduct>(predicate: #Predicate { $0.rank == rank })
        descriptor.fetchLimit = 1
        return try ModelContext(container).fetch(descriptor).count
    }
    let (directTimes, remoteTimes) = try await alternately(calls: calls, rows: rows, remoteOnly: remoteOnly, directOnly: directOnly,
                                                           direct: { try point(direct, $0) }, remote: { try point(remote, $0) })
    print("point fetch (models, \(calls) calls): direct store \(p50(directTimes)); service \(p50(remoteTimes))")
    await direct.close()
    await remote.close()
    try await stores.close()
}

/// The microseconds of `calls` point fetches of random ranks below `rows` by each side, call by call
/// (after 200 unmeasured), each fetch checked to find one row; a side left out gives no figures.
private func alternately(calls: Int, rows: Int, remoteOnly: Bool, directOnly: Bool,
                         direct: (Int) async throws -> Int, remote: (Int) async throws -> Int) async throws -> (direct: [Double], remote: [Double]) {
    let clock = ContinuousClock()
    var directTimes: [Double] = [], remoteTimes: [Double] = []
    for call in -200..<calls {
        let rank = Int.random(in: 0..<rows)
        if !remoteOnly {
            let began = clock.now
            guard try await direct(rank) == 1 else { throw PGModelError(.internalError, "direct") }
            if call >= 0 { directTimes.append(microseconds(clock.now - began)) }
        }
        if !directOnly {
            let began = clock.now
            guard try await remote(rank) == 1 else { throw PGModelError(.internalError, "remote") }
            if call >= 0 { remoteTimes.append(microseconds(clock.now - began)) }
        }
    }
    return (directTimes, remoteTimes)
}

/// A p50 in microseconds, or "-" for no samples.
private func p50(_ samples: [Double]) -> String {
    samples.isEmpty ? "-" : String(format: "%.1f µs", percentile(samples, 0.5))
}
