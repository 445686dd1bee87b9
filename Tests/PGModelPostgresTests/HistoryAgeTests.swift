import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
import Testing

/// The ages of history retention (`--older-than`, `--max-age`): `<count><d|h|m|s>`, nothing else.
@Suite("History age")
struct HistoryAgeTests {
    @Test func parsesEachUnit() throws {
        #expect(try HistoryAge(parsing: "30d").seconds == 2_592_000)
        #expect(try HistoryAge(parsing: "12h").seconds == 43_200)
        #expect(try HistoryAge(parsing: "90m").seconds == 5_400)
        #expect(try HistoryAge(parsing: "45s").seconds == 45)
        #expect(try HistoryAge(parsing: " 7D ").seconds == 604_800)
    }

    @Test func printsTheLargestEvenUnit() throws {
        #expect(try HistoryAge(parsing: "30d").description == "30d")
        #expect(try HistoryAge(parsing: "36h").description == "36h")
        #expect(try HistoryAge(parsing: "48h").description == "2d")
        #expect(try HistoryAge(parsing: "90m").description == "90m")
        #expect(try HistoryAge(parsing: "120s").description == "2m")
        #expect(try HistoryAge(parsing: "61s").description == "61s")
    }

    @Test func refusesEverythingElse() {
        for text in ["", "d", "30", "0d", "-1d", "+1d", "1.5h", "1w", "1 d", "1dd", "١d", "99999999999999999999d", "36601d"] {
            #expect(throws: PGModelError.self, "\(text)") { try HistoryAge(parsing: text) }
            do {
                _ = try HistoryAge(parsing: text)
            } catch let error as PGModelError {
                #expect(error.code == .invalidConfiguration)
            } catch {
                Issue.record("\(text): \(error)")
            }
        }
        #expect(HistoryAge(seconds: 0) == nil)
        #expect(HistoryAge(seconds: HistoryAge.maximumSeconds + 1) == nil)
    }

    @Test func aRetentionNeedsALimit() throws {
        #expect(throws: PGModelError.self) { try HistoryRetention(store: "s", maxAge: nil, maxChanges: nil) }
        #expect(throws: PGModelError.self) { try HistoryRetention(store: "s", maxAge: nil, maxChanges: -1) }
        let retention = try HistoryRetention(store: "s", maxAge: nil, maxChanges: 0)
        let json = String(decoding: try JSONEncoder().encode(retention), as: UTF8.self)
        #expect(json.contains(#""max_age":null"#) && json.contains(#""max_changes":0"#))
        #expect(try JSONDecoder().decode(HistoryRetention.self, from: Data(json.utf8)) == retention)
    }

    @Test func aReportAddsBatchesUntilOneRemovesNothing() {
        var report = HistoryPruneReport(store: "s", maxAge: nil, maxChanges: 1)
        let goesOn = [report.add(HistoryPruneBatch(transactions: 2, changes: 5, deletedThrough: 10)),
                      report.add(HistoryPruneBatch(transactions: 1, changes: 1, deletedThrough: 12)),
                      report.add(HistoryPruneBatch())]
        #expect(goesOn == [true, true, false])
        #expect(report.transactions == 3 && report.changes == 6 && report.deletedThrough == 12 && report.batches == 2 && !report.busy)
        let afterBusy = report.add(HistoryPruneBatch(busy: true))
        #expect(!afterBusy)
        #expect(report.busy)
    }
}
