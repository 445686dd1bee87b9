// SwiftDataError as Apple's reference declares it: catch clauses and switches over its constants.
import Foundation
import PGModel

func snippetCatchUnsupportedPredicate(context: ModelContext) {
    let predicate = #Predicate<SnippetTrip> { $0.name.contains("Paris") }
    do {
        _ = try context.fetch(FetchDescriptor<SnippetTrip>(predicate: predicate))
    } catch SwiftDataError.unsupportedPredicate {
        print("unsupported predicate")
    } catch let error as SwiftDataError {
        switch error {
        case .unsupportedSortDescriptor, .unsupportedKeyPath: print("rewrite the fetch")
        case .loadIssueModelContainer: print("the store is unreachable")
        case .includePendingChangesWithBatchSize, .sortingPendingChangesWithIdentifiers: print("fetch options")
        default: print(error)
        }
    } catch {
        print(error.localizedDescription)
    }
}

func snippetCreateContainer() -> ModelContainer? {
    var modelContainer: ModelContainer?
    do {
        modelContainer = try ModelContainer(for: SnippetTrip.self, SnippetAccommodation.self)
    } catch SwiftDataError.loadIssueModelContainer {
        print("could not load the store")
    } catch SwiftDataError.backwardMigration, SwiftDataError.unknownSchema, SwiftDataError.unknownDataStoreSchema {
        print("the store's schema is not this app's")
    } catch SwiftDataError.configurationFileNameTooLong, SwiftDataError.configurationFileNameContainsInvalidCharacters,
            SwiftDataError.configurationSchemaNotFoundInContainerSchema, SwiftDataError.duplicateConfiguration {
        print("configuration")
    } catch {
        print(error)
    }
    return modelContainer
}

func snippetSaveValidation(context: ModelContext) {
    do {
        try context.save()
    } catch SwiftDataError.modelValidationFailure {
        context.rollback()
    } catch SwiftDataError.missingModelContext {
        print("no context")
    } catch {
        print(error)
    }
}

func snippetHistoryErrors(context: ModelContext, token: DefaultHistoryToken) {
    var descriptor = HistoryDescriptor<DefaultHistoryTransaction>()
    descriptor.predicate = #Predicate { $0.token > token }
    do {
        _ = try context.fetchHistory(descriptor)
    } catch SwiftDataError.historyTokenExpired {
        print("start over")
    } catch SwiftDataError.invalidTransactionFetchRequest {
        print("bad history fetch")
    } catch {
        print(error)
    }
}

func snippetCompareErrors(_ error: any Error) -> Bool {
    guard let error = error as? SwiftDataError else { return false }
    return SwiftDataError.unsupportedPredicate ~= error
}
