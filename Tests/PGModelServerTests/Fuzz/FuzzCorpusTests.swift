import Foundation
import Testing

/// Replays the fuzz harness's inputs in CI, without libFuzzer: the seeds (a valid request of every op,
/// and a few hostile streams) and every input a campaign found interesting (`FuzzCorpus/regressions`,
/// crashes before their fix among them). Each must run through framing, decoding, the session, validation,
/// rendering and response encoding with only coded errors, and without trapping the test process.
@Suite("Fuzz corpus: every kept input yields coded errors or valid results")
struct FuzzCorpusTests {
    static func inputs(_ folder: String) -> [URL] {
        guard let root = Bundle.module.url(forResource: "FuzzCorpus", withExtension: nil),
              let files = try? FileManager.default.contentsOfDirectory(
                  at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)
        else { return [] }
        return files.filter { !$0.lastPathComponent.hasPrefix(".") }.sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    /// Seeds that are valid requests against FuzzSchema: each renders SQL and fails nothing.
    static let validSeeds: Set<String> = [
        "fetch", "fetch-page", "fetch-related", "fetch-sort-cast", "count", "ids", "save-insert", "save-delete",
        "save-links", "save-shares", "history", "history-filters", "deleteHistory", "share", "unshare", "shares",
        "expressions", "aggregates", "values", "register",
    ]

    @Test("the corpus is bundled")
    func corpusIsBundled() {
        #expect(Self.inputs("seeds").count >= 30)
        #expect(Self.inputs("regressions").count >= 1)
    }

    @Test("seeds: valid requests of every op render; hostile streams get coded errors", arguments: inputs("seeds"))
    func seed(_ file: URL) throws {
        let outcome = FuzzDriver.runDetailed(Array(try Data(contentsOf: file)))
        #expect(outcome.violations == [], "\(file.lastPathComponent)")
        #expect(outcome.lines >= 1, "\(file.lastPathComponent)")
        #expect(!outcome.errors.contains("internal_error"), "\(file.lastPathComponent): \(outcome.errors)")
        if Self.validSeeds.contains(file.lastPathComponent) {
            #expect(outcome.errors == [], "\(file.lastPathComponent): \(outcome.errors)")
            #expect(outcome.rendered > 0 || file.lastPathComponent == "share" || file.lastPathComponent == "unshare",
                    "\(file.lastPathComponent) rendered no SQL")
        }
    }

    /// The coverage-minimized corpus of the recorded campaigns (docs/FUZZING.md), one base64 input a line,
    /// so that hundreds of inputs are one file in the repository.
    static func campaign() -> [[UInt8]] {
        guard let url = Bundle.module.url(forResource: "FuzzCorpus", withExtension: nil)?.appendingPathComponent("campaign.b64"),
              let text = try? String(contentsOf: url, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { Data(base64Encoded: String($0)).map(Array.init) }
    }

    @Test("the campaign corpus: every input a campaign kept for its coverage ends in coded errors")
    func campaignCorpus() {
        let inputs = Self.campaign()
        #expect(inputs.count >= 900)
        var lines = 0
        var errors = 0
        for (index, input) in inputs.enumerated() {
            let outcome = FuzzDriver.runDetailed(input)
            #expect(outcome.violations == [], "campaign input \(index)")
            #expect(!outcome.errors.contains("internal_error"), "campaign input \(index): \(outcome.errors)")
            lines += outcome.lines
            errors += outcome.errors.count
        }
        // Most kept inputs are near misses: plenty of lines, and plenty of coded answers among them.
        #expect(lines > inputs.count && errors > inputs.count / 2, "\(lines) lines, \(errors) errors")
    }

    @Test("regressions: inputs campaigns kept, crashes included, end in coded errors", arguments: inputs("regressions"))
    func regression(_ file: URL) throws {
        let outcome = FuzzDriver.runDetailed(Array(try Data(contentsOf: file)))
        #expect(outcome.violations == [], "\(file.lastPathComponent)")
        #expect(!outcome.errors.contains("internal_error"), "\(file.lastPathComponent): \(outcome.errors)")
    }
}
