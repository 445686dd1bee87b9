import Foundation
@_spi(PGModelInternals) import PGModel
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelIO
@_spi(PGModelInternals) import PGModelPostgres

/// `--service-table [--remote-only]`: a fetch of every row of a 20,000-row table as the stores' `table`
/// (no models), on the direct store and through an in-process service, alternately, `rounds` times each;
/// medians and minimums. With `--remote-only` only the service's, for profiling what it adds.
func runServiceTableLoop(databaseURL: URL, rows: Int, rounds: Int, remoteOnly: Bool) async throws {
    let stores = try await ServiceBenchStores.open(databaseURL: databaseURL, rows: rows, label: "table")
    let (remote, direct, entity) = (stores.remote, stores.direct, stores.entity)
    let clock = ContinuousClock()
    var directTimes: [Double] = [], remoteTimes: [Double] = []
    for round in -2..<rounds {
        if !remoteOnly {
            let began = clock.now
            guard try await direct.fetchTable(FetchRequest(entity: entity)).rows.count == rows else { throw PGModelError(.internalError, "direct") }
            if round >= 0 { directTimes.append(microseconds(clock.now - began) / 1000) }
        }
        let began = clock.now
        guard try await remote.fetchTable(FetchRequest(entity: entity)).rows.count == rows else { throw PGModelError(.internalError, "remote") }
        if round >= 0 { remoteTimes.append(microseconds(clock.now - began) / 1000) }
    }
    func summary(_ x: [Double]) -> String {
        guard !x.isEmpty else { return "-" }
        return String(format: "median %.1f ms, min %.1f ms", x.sorted()[x.count / 2], x.min() ?? 0)
    }
    print("table of \(rows) rows: direct store \(summary(directTimes)); service \(summary(remoteTimes))")
    try await stores.close()
}
