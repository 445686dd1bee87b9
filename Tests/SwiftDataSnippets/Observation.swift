// ResultsObserver and withContinuousObservation as Apple's reference and "What's new in SwiftData" write them.
import Foundation
import Observation
import PGModel

struct SnippetMapCameraBounds { var count: Int }

// From the session: the observer's results handed to a function taking an array.
@Observable @MainActor final class SnippetMapCameraController {
    private let resultsObserver: ResultsObserver<SnippetTrip, Never>
    var bounds: SnippetMapCameraBounds?
    private var token: ObservationTracking.Token?

    init(modelContext: ModelContext) throws {
        resultsObserver = try ResultsObserver<SnippetTrip, Never>(modelContext: modelContext)

        token = withContinuousObservation(options: [.didSet]) { [weak self, resultsObserver] event in
            self?.bounds = self?.calculateBounds(trips: resultsObserver.results)
        }
    }

    private func calculateBounds(trips: [SnippetTrip]) -> SnippetMapCameraBounds? {
        trips.isEmpty ? nil : SnippetMapCameraBounds(count: trips.count)
    }
}

// The Japanese edition's spelling.
@MainActor func snippetModelResultsObserver(modelContext: ModelContext) throws -> ObservationTracking.Token {
    let modelResultsObserver = try ModelResultsObserver<SnippetTrip>(modelContext: modelContext)
    return withContinuousObservation(options: .didSet, apply: { _ in
        print(modelResultsObserver.results.count)
    })
}

// The reference's initializers and properties.
@MainActor func snippetResultsObserverReference(modelContext: ModelContext, container: ModelContainer) throws {
    let all = try ResultsObserver<SnippetTrip, Never>(modelContext: modelContext)
    let described = try ResultsObserver<SnippetTrip, Never>(fetchDescriptor: FetchDescriptor<SnippetTrip>(), modelContainer: container)
    let byDestination = try ResultsObserver<SnippetTrip, String>(sectionBy: \.destination, modelContext: modelContext)
    let defaulted = try ResultsObserver<SnippetTrip, String>(sectionBy: \SnippetTrip.name, modelContainer: container)

    let results: FetchResultsCollection<SnippetTrip> = all.results
    for trip in results { print(trip.name) }
    print(all.fetchDescriptor.sortBy.count, described.results.first?.name ?? "")
    print(byDestination.sectionBy as Any, byDestination.sections?.count ?? 0, defaulted.sections?.first?.id ?? "")
    all.filterBy = #Predicate<SnippetTrip> { $0.destination == "Paris" }
    all.sortBy = [SortDescriptor(\.startDate)]
}
