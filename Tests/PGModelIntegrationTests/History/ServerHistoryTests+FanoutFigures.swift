import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
import Testing

/// Figures, not a check: run with `PGMODEL_SUBSCRIBER_FIGURES=connections,users[,commits]` to print the
/// visibility reads per commit and the commit→event latency (debug build, loopback) with that many
/// subscribed connections spread over that many users. Benchmarks' `--subscribers` measures the same
/// in release.
extension ServerHistoryTests {
    static var subscriberFigures: [Int]? {
        ProcessInfo.processInfo.environment["PGMODEL_SUBSCRIBER_FIGURES"].map { $0.split(separator: ",").compactMap { Int($0) } }
    }

    @Test("figures: visibility reads and event latency per commit with many subscribed connections",
          .enabled(if: ServerHistoryTests.subscriberFigures.map { $0.count >= 2 } ?? false))
    func subscriberFiguresPerCommit() async throws {
        let figures = Self.subscriberFigures ?? []
        let (connections, userCount) = (figures[0], max(1, figures[1]))
        let commits = figures.count > 2 ? figures[2] : 20
        var made: [AuthenticatedUser] = []
        for _ in 0..<userCount { made.append(try await ServerTestHarness.makeUser("fig")) }
        let users = made
        let entity = ServerTestHarness.uniqueEntity("Figure")
        let schema = try RawProtocolTests.schemaJSON(entity)
        try await ServerTestHarness.register(json: schema)
        try await ServerTestHarness.withRunningServer(configure: { $0.maxConnections = nil; $0.idleTimeout = nil }) { server, port in
            var subscribed: [RawProtocolClient] = []
            for index in 0..<connections { subscribed.append(try await Self.subscribed(users[index % userCount], port: port)) }
            let writerCount = min(userCount, 5)
            var writers: [RawProtocolClient] = []
            for index in 0..<writerCount {
                let writer = try await RawProtocolClient.connect(port: port)
                #expect(try await RawProtocolTests.hello(writer, users[index].name, "secret").ok == true)
                writers.append(writer)
            }
            let clients = subscribed
            let all = subscribed + writers
            defer { Task { for client in all { await client.close() } } }

            var latencies: [Double] = []
            let reads = server.visibilityReadCount
            let rounds = server.visibilityRoundCount
            for commit in 0..<commits {
                let writer = commit % writerCount
                let id = UUID.v7().uuidString.lowercased()
                let start = ContinuousClock.now
                let saved = try await writers[writer].request(
                    #"{"id":\#(10 + commit),"op":"save","inserts":[{"entity":"\#(entity)","id":"\#(id)","values":{"name":"n\#(commit)","rank":\#(commit)}}]}"#)
                #expect(saved.ok == true, "\(saved)")
                for index in stride(from: writer, to: connections, by: userCount) {
                    _ = try await Self.nextEvent(clients[index], about: entity)
                    let elapsed = ContinuousClock.now - start
                    latencies.append(Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15)
                }
            }
            latencies.sort()
            let readsPerCommit = Double(server.visibilityReadCount - reads) / Double(commits)
            let roundsPerCommit = Double(server.visibilityRoundCount - rounds) / Double(commits)
            func at(_ p: Double) -> Double { latencies.isEmpty ? .nan : latencies[min(latencies.count - 1, Int(Double(latencies.count - 1) * p))] }
            print("subscriber figures: \(connections) connections, \(userCount) users, \(commits) commits: "
                + "visibility reads/commit \(String(format: "%.2f", readsPerCommit)), rounds/commit \(String(format: "%.2f", roundsPerCommit)), "
                + "event latency p50 \(String(format: "%.1f", at(0.5))) ms, p99 \(String(format: "%.1f", at(0.99))) ms")
            #expect(latencies.count == commits * ((connections + userCount - 1) / userCount) || connections % userCount != 0)
        }
    }
}
