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

    @Test("regressions: inputs campaigns kept, crashes included, end in coded errors", arguments: inputs("regressions"))
    func regression(_ file: URL) throws {
        let outcome = FuzzDriver.runDetailed(Array(try Data(contentsOf: file)))
        #expect(outcome.violations == [], "\(file.lastPathComponent)")
        #expect(!outcome.errors.contains("internal_error"), "\(file.lastPathComponent): \(outcome.errors)")
    }
}
