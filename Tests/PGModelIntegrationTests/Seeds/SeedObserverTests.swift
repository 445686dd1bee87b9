import Foundation
import Observation
@_spi(PGModelInternals) import PGModelCore
import Testing

@_spi(PGModelInternals) @testable import PGModel
import PGModelTesting

// The seed's MapCameraController and ServerSync, with only what Linux lacks replaced: MapKit's
// MapCameraBounds becomes a latitude span, and ServerSync's `let observer` assigned in `start()`
// (which does not compile in Swift either) becomes an optional `var`.

struct MapCameraBounds: Equatable {
    var minLatitude: Double
    var maxLatitude: Double
}

extension SampleTrips.Trip {
    /// Stands in for the seed's `location` (Trip in SeedGraphModels has no coordinates): a stable
    /// pseudo-latitude per destination.
    var latitude: Double { Double(destination.unicodeScalars.reduce(0) { $0 + Int($1.value) } % 90) }
}

@Observable @MainActor final class MapCameraController {
    private let resultsObserver: ResultsObserver<SampleTrips.Trip, Never>
    var bounds: MapCameraBounds?
    private var token: ObservationTracking.Token?

    init(modelContext: ModelContext) throws {
        resultsObserver = try ResultsObserver<SampleTrips.Trip, Never>(modelContext: modelContext)

        token = withContinuousObservation(options: [.didSet]) { [weak self, resultsObserver] event in
            self?.bounds = self?.calculateBounds(trips: resultsObserver.results)
        }
    }

    private func calculateBounds(trips: [SampleTrips.Trip]) -> MapCameraBounds? {
        let latitudes = trips.map(\.latitude)
        guard let low = latitudes.min(), let high = latitudes.max() else { return nil }
        return MapCameraBounds(minLatitude: low, maxLatitude: high)
    }
}

/// The seed's custom global actor, on a serial queue of its own: ServerSync's synchronous
/// `fetchHistory` may block it without starving Swift's cooperative pool.
@globalActor actor SyncActor {
    static let shared = SyncActor()
    private nonisolated let executor = QueueExecutor()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
}

final class QueueExecutor: SerialExecutor, @unchecked Sendable {
    // @unchecked: a serial dispatch queue is thread-safe.
    private let queue = DispatchQueue(label: "SyncActor")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
}

@SyncActor final class ServerSync {
    private var observer: HistoryObserver?
    private var token: ObservationTracking.Token?
    private let modelContainer: ModelContainer
    private var lastToken: DefaultHistoryToken?
    /// What was "uploaded": the App's transactions, each once.
    private(set) var uploaded: [Int64] = []
    private(set) var processingError: (any Error)?

    init(modelContainer: ModelContainer) { self.modelContainer = modelContainer }

    func start() throws {
        self.observer = try HistoryObserver(authors: ["App"], modelContainer: modelContainer)
        token = withContinuousObservation(options: .didSet) { [weak self] _ in
            _ = self?.observer?.eventCounter
            self?.processChanges()
        }
    }

    private func processChanges() {
        // Fetch and process history transactions
        do {
            let context = ModelContext(modelContainer)
            let descriptor: HistoryDescriptor<DefaultHistoryTransaction>
            if let lastToken {
                descriptor = HistoryDescriptor(predicate: #Predicate { $0.author == "App" && $0.token > lastToken })
            } else {
                descriptor = HistoryDescriptor(predicate: #Predicate { $0.author == "App" })
            }
            let transactions = try context.fetchHistory(descriptor)
            uploaded += transactions.map(\.transactionIdentifier)
            lastToken = transactions.last?.token ?? lastToken
        } catch {
            processingError = error
        }
    }
}

@Suite("Seed ports: MapCameraController and ServerSync")
struct SeedObserverTests {
    typealias Trip = SampleTrips.Trip
    let base = Date(timeIntervalSince1970: 1_750_000_000)

    /// The Japanese edition of the session writes `ModelResultsObserver<Trip>(modelContext:)`.
    @Test("ModelResultsObserver<Trip> is the unsectioned ResultsObserver and fetches the trips")
    func modelResultsObserverIsTheUnsectionedObserver() throws {
        let container = try ModelContainer(for: Schema(SampleTrips.models), configurations: ModelConfiguration(url: TestDatabase.schemaURL()))
        let modelContext = ModelContext(container)
        modelContext.insert(Trip(name: "Hanami", destination: "Kyoto", startDate: base, endDate: base))
        try modelContext.save()
        let modelResultsObserver: ResultsObserver<Trip, Never> = try ModelResultsObserver<Trip>(modelContext: modelContext)
        #expect(modelResultsObserver.results.map(\.name) == ["Hanami"])
        #expect(modelResultsObserver.sections == nil)
    }

    @Test(arguments: StoreKind.observed)
    func serverSyncUploadsTheAppsTransactionsOnce(kind: StoreKind) async throws {
        let f = try await StoreFixture.make(kind, SampleTrips.models, service: kind == .service ? try await TestService.seeds() : nil)
        let sync = await ServerSync(modelContainer: f.container)
        try await sync.start()
        let appTransactions: [Int64] = try await offCooperativePool {
            let app = f.newContext()
            app.author = "App"
            let server = f.newContext()
            server.author = "Server"
            app.insert(Trip(name: "\(f.token)-1", destination: "Kyoto", startDate: base, endDate: base))
            try app.save()
            server.insert(Trip(name: "\(f.token)-2", destination: "Kyoto", startDate: base, endDate: base))
            try server.save()
            app.insert(Trip(name: "\(f.token)-3", destination: "Kyoto", startDate: base, endDate: base))
            try app.save()
            return try app.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.author == "App" }))
                .map(\.transactionIdentifier)
        }
        #expect(appTransactions.count == 2)
        var uploaded: [Int64] = []
        for _ in 0..<1200 where uploaded.count < 2 {   // up to a minute: CI runs every suite at once
            // Re-checked on the actor each time its observation ran; bounded, not a timing assumption.
            uploaded = await sync.uploaded
            if uploaded.count < 2 { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(uploaded == appTransactions)
        #expect(await sync.processingError == nil)
    }

    // A bound on a hang, not on speed. The test runs on the main actor, which the parallel integration
    // phase's other main-actor tests hold while their synchronous calls block it: there it waits its
    // turn for minutes, where alone it takes about a second.
    @Test(.timeLimit(.minutes(10)))
    @MainActor
    func mapCameraControllerFollowsTheTrips() async throws {
        let f = try await StoreFixture.make(.direct, SampleTrips.models)
        let context = f.newContext()
        context.insert(Trip(name: "\(f.token)-a", destination: "Oslo", startDate: base, endDate: base))
        try context.save()
        let controller = try MapCameraController(modelContext: context)
        let first = try #require(controller.bounds)
        #expect(first.minLatitude == first.maxLatitude)
        context.insert(Trip(name: "\(f.token)-b", destination: "Cairo", startDate: base, endDate: base))
        try context.save()
        for _ in 0..<400 where controller.bounds == first {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(controller.bounds != first)
    }
}
