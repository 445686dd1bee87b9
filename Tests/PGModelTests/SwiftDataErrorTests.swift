import Foundation
@_spi(PGModelInternals) @testable import PGModel
import Testing

/// `SwiftDataError`'s constants catch what PGModel throws, by kind.
@Suite("SwiftDataError: Apple's constants match PGModel's codes")
struct SwiftDataErrorTests {
    static func thrower(_ code: PGModelError.Code) -> () throws -> Void {
        { throw PGModelError(code, "from the store") }
    }

    /// Which of the catch clauses written as Apple's code writes them caught the error.
    static func caughtBy(_ body: () throws -> Void) -> String {
        do {
            try body()
            return "nothing thrown"
        } catch SwiftDataError.unsupportedPredicate {
            return "unsupportedPredicate"
        } catch SwiftDataError.loadIssueModelContainer {
            return "loadIssueModelContainer"
        } catch SwiftDataError.modelValidationFailure {
            return "modelValidationFailure"
        } catch SwiftDataError.historyTokenExpired {
            return "historyTokenExpired"
        } catch {
            return "other"
        }
    }

    @Test("catch clauses match by kind: one code, or any code of a kind")
    func catchClausesMatchByKind() {
        #expect(Self.caughtBy(Self.thrower(.unsupportedPredicate)) == "unsupportedPredicate")
        for code: PGModelError.Code in [.connectionFailed, .authenticationFailed, .invalidConfiguration, .migrationFailed,
                                        .schemaVersionMismatch, .unknownSchemaVersion] {
            #expect(Self.caughtBy(Self.thrower(code)) == "loadIssueModelContainer", "\(code)")
        }
        for code: PGModelError.Code in [.uniqueViolation, .typeMismatch, .constraintViolation, .relationshipCount, .deleteDenied] {
            #expect(Self.caughtBy(Self.thrower(code)) == "modelValidationFailure", "\(code)")
        }
        #expect(Self.caughtBy(Self.thrower(.historyTokenExpired)) == "historyTokenExpired")
        #expect(Self.caughtBy(Self.thrower(.saveConflict)) == "other")
        #expect(Self.caughtBy(Self.thrower(.forbidden)) == "other")
        #expect(Self.caughtBy { throw CocoaError(.fileNoSuchFile) } == "other")
    }

    @Test("switch cases over a caught SwiftDataError")
    func switchCases() {
        func kind(_ error: SwiftDataError) -> String {
            switch error {
            case .unsupportedSortDescriptor: return "sort"
            case .unsupportedKeyPath: return "keyPath"
            case .invalidTransactionFetchRequest: return "history"
            case .backwardMigration: return "backward"
            case .unknownSchema: return "unknown"
            default: return "other"
            }
        }
        #expect(kind(PGModelError(.unsupportedSort, "x")) == "sort")
        #expect(kind(PGModelError(.unknownAttribute, "x")) == "keyPath")
        #expect(kind(PGModelError(.unsupportedHistoryQuery, "x")) == "history")
        #expect(kind(PGModelError(.schemaVersionMismatch, "x")) == "backward")
        #expect(kind(PGModelError(.unknownSchemaVersion, "x")) == "unknown")
        #expect(kind(PGModelError(.notFound, "x")) == "other")
        // Kinds PGModel never throws match only themselves.
        #expect(!(SwiftDataError.includePendingChangesWithBatchSize ~= PGModelError(.invalidField, "x")))
        #expect(SwiftDataError.duplicateConfiguration ~= SwiftDataError.duplicateConfiguration)
    }

    @Test("a container refuses configurations naming different stores before connecting")
    func differentStoresAreRefused() throws {
        let first = ModelConfiguration("a", url: try #require(URL(string: "postgres://u:p@127.0.0.1:1/one")))
        let second = ModelConfiguration("b", url: try #require(URL(string: "postgres://u:p@127.0.0.1:1/two")))
        let error = #expect(throws: PGModelError.self) {
            _ = try ModelContainer(for: Album.self, configurations: first, second)
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(Self.caughtBy { _ = try ModelContainer(for: Album.self, configurations: first, second) }
                == "loadIssueModelContainer")
    }

    @Test("configuration identifiers report what was given")
    func configurationIdentifiers() {
        let grouped = ModelConfiguration(groupContainer: .identifier("group.example"), cloudKitDatabase: .private("iCloud.example"))
        #expect(grouped.groupAppContainerIdentifier == "group.example")
        #expect(grouped.cloudKitContainerIdentifier == "iCloud.example")
        let plain = ModelConfiguration(isStoredInMemoryOnly: true)
        #expect(plain.groupAppContainerIdentifier == nil)
        #expect(plain.cloudKitContainerIdentifier == nil)
    }
}
