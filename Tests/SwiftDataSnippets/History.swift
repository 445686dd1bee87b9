// Persistent history as Apple's sessions and reference pages write it. Compiled, never run.
import Foundation
import PGModel

// "Track model changes with SwiftData history" (WWDC24): fetch transactions from history.
func snippetFindTransactions(after token: DefaultHistoryToken?, author: String, modelContainer: ModelContainer) -> [DefaultHistoryTransaction] {
    var historyDescriptor = HistoryDescriptor<DefaultHistoryTransaction>()
    if let token {
        historyDescriptor.predicate = #Predicate { transaction in
            (transaction.token > token) && (transaction.author == author)
        }
    }

    var transactions: [DefaultHistoryTransaction] = []
    let taskContext = ModelContext(modelContainer)
    do {
        transactions = try taskContext.fetchHistory(historyDescriptor)
    } catch let error {
        print(error)
    }

    return transactions
}

// WWDC24: process history changes, matching each change's model type.
func snippetFindTrips(in transactions: [DefaultHistoryTransaction], modelContainer: ModelContainer) -> (Set<SnippetTrip>, DefaultHistoryToken?) {
    let taskContext = ModelContext(modelContainer)
    var resultTrips: Set<SnippetTrip> = []
    for transaction in transactions {
        for change in transaction.changes {
            let modelID = change.changedPersistentIdentifier
            let fetchDescriptor = FetchDescriptor<SnippetTrip>(predicate: #Predicate { trip in
                trip.accommodation?.persistentModelID == modelID
            })
            let fetchResults = try? taskContext.fetch(fetchDescriptor)
            guard let matchedTrip = fetchResults?.first else {
                continue
            }
            switch change {
            case .insert(_ as DefaultHistoryInsert<SnippetAccommodation>):
                resultTrips.insert(matchedTrip)
            case .update(_ as DefaultHistoryUpdate<SnippetAccommodation>):
                resultTrips.update(with: matchedTrip)
            case .delete(_ as DefaultHistoryDelete<SnippetAccommodation>):
                resultTrips.remove(matchedTrip)
            default: break
            }
        }
    }
    return (resultTrips, transactions.last?.token)
}

// The reference pages' change types, bound and read: inserted models, updated attributes, tombstones.
func snippetDescribeChanges(_ transaction: DefaultHistoryTransaction) -> [String] {
    var lines: [String] = []
    for change in transaction.changes {
        switch change {
        case .insert(let insert as DefaultHistoryInsert<SnippetTrip>):
            lines.append("inserted \(insert.changedPersistentIdentifier) in \(insert.transactionIdentifier)")
        case .update(let update as DefaultHistoryUpdate<SnippetTrip>):
            lines.append("updated \(update.updatedAttributes.count) attributes, change \(update.changeIdentifier)")
        case .delete(let delete as DefaultHistoryDelete<SnippetTrip>):
            lines.append("deleted \(String(describing: delete.tombstone[\.name]))")
        default:
            lines.append("another model's change")
        }
    }
    lines.append("\(transaction.author ?? "-") \(transaction.bundleIdentifier) \(transaction.processIdentifier) \(transaction.storeIdentifier) \(transaction.timestamp)")
    return lines
}

// "SwiftData: Dive into inheritance and schema migration" (WWDC25): fetch the last transaction efficiently.
func snippetLastToken(context: ModelContext) throws -> DefaultHistoryToken? {
    var historyToken: DefaultHistoryToken?
    // Fetch history with sortBy and fetchlimit to get the last token

    var historyDesc = HistoryDescriptor<DefaultHistoryTransaction>()
    historyDesc.sortBy = [.init(\.transactionIdentifier, order: .reverse)]
    historyDesc.fetchLimit = 1

    let transactions = try context.fetchHistory(historyDesc)
    if let transaction = transactions.last {
        historyToken = transaction.token
    }
    return historyToken
}

// WWDC25: history after a token, only for the entities of concern. The session lists the classes
// themselves; entity names are strings, as `changedPersistentIdentifier.entityName` is. It then joins two
// predicates with `tokenPredicate.evaluate($0) && changesPredicate.evaluate($0)`, which the `#Predicate`
// macro of swift-foundation on Linux rejects ("The evaluate(_:) function is not supported in this
// predicate"; see docs/COMPARISON.md): the same condition is written as one predicate here.
func snippetChangesOfConcern(after historyToken: DefaultHistoryToken, context: ModelContext) throws -> [DefaultHistoryTransaction] {
    // Changes for ONLY entities of concern
    let entityNames = [String(describing: SnippetAccommodation.self), String(describing: SnippetTrip.self)]

    // Changes AFTER the last known token, for ONLY entities of concern
    let fullPredicate = #Predicate<DefaultHistoryTransaction> {
        $0.token > historyToken
        &&
        $0.changes.contains { change in
            entityNames.contains(change.changedPersistentIdentifier.entityName)
        }
    }

    let historyDesc = HistoryDescriptor<DefaultHistoryTransaction>(predicate: fullPredicate)
    let transactions = try context.fetchHistory(historyDesc)
    return transactions
}

// Sorting history by several keys, as `HistoryDescriptor.sortBy` allows (iOS 26).
func snippetHistoryByAuthor(context: ModelContext) throws -> [DefaultHistoryTransaction] {
    let descriptor = HistoryDescriptor<DefaultHistoryTransaction>(
        predicate: nil,
        sortBy: [SortDescriptor(\.author), SortDescriptor(\.timestamp, order: .reverse)])
    return try context.fetchHistory(descriptor)
}

// `ModelContext.deleteHistory(_:)`: drop history an app has processed.
func snippetDeleteHistory(before token: DefaultHistoryToken, context: ModelContext) throws {
    let descriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token < token })
    try context.deleteHistory(descriptor)
}

// An app's own transaction type: `HistoryTransaction` asks only for these members, as a custom store's
// history type does (WWDC24, custom stores).
struct SnippetHistoryToken: Codable, Comparable, Hashable, Identifiable, Sendable {
    let id: Int
    static func < (lhs: Self, rhs: Self) -> Bool { lhs.id < rhs.id }
}

struct SnippetHistoryTransaction: HistoryTransaction {
    typealias TokenType = SnippetHistoryToken
    typealias TransactionIdentifier = Int

    let author: String?
    let changes: [HistoryChange]
    let storeIdentifier: String
    let timestamp: Date
    let token: SnippetHistoryToken
    let transactionIdentifier: Int

    var id: Int { transactionIdentifier }
}

func snippetCustomHistoryDescriptor(after token: SnippetHistoryToken) -> HistoryDescriptor<SnippetHistoryTransaction> {
    var descriptor = HistoryDescriptor<SnippetHistoryTransaction>(predicate: #Predicate { $0.token > token })
    descriptor.sortBy = [SortDescriptor(\.transactionIdentifier)]
    descriptor.fetchLimit = 10
    return descriptor
}
