// #Predicate string comparisons the reference documents.
import Foundation
import PGModel

func snippetStringComparisons(context: ModelContext, name: String) throws {
    let ascending = ComparisonResult.orderedAscending
    let same = ComparisonResult.orderedSame
    let before = #Predicate<SnippetTrip> { $0.name.localizedCompare(name) == ascending }
    let equalIgnoringCase = #Predicate<SnippetTrip> { $0.name.caseInsensitiveCompare(name) == same }
    let search = #Predicate<SnippetTrip> { $0.destination.localizedStandardContains(name) }
    _ = try context.fetch(FetchDescriptor(predicate: before))
    _ = try context.fetch(FetchDescriptor(predicate: equalIgnoringCase))
    _ = try context.fetch(FetchDescriptor(predicate: search, sortBy: [SortDescriptor(\.name)]))
}
