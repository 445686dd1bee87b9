import Dispatch

/// An actor that owns a `ModelContext` for background work; `@ModelActor` writes the conformance.
/// Models never leave the actor; pass `PersistentIdentifier`s and the container instead.
///
/// ```swift
/// @ModelActor actor Importer {
///     func importTrips(_ names: [String]) throws {
///         for name in names { modelContext.insert(Trip(name: name)) }
///         try modelContext.save()
///     }
/// }
/// let importer = Importer(modelContainer: container)
/// try await importer.importTrips(["Paris"])
/// ```
public protocol ModelActor: Actor {
    /// The executor whose context the actor uses.
    nonisolated var modelExecutor: any ModelExecutor { get }
    /// The container the context reads and writes.
    nonisolated var modelContainer: ModelContainer { get }
}

extension ModelActor {
    /// The actor runs on its model executor's serial queue, so its context is only ever used there.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        if let serial = modelExecutor as? any SerialExecutor { return serial.asUnownedSerialExecutor() }
        // A custom executor that cannot run jobs: use one shared serial queue, never the cooperative pool.
        return QueueSerialExecutor.shared.asUnownedSerialExecutor()
    }

    /// The actor's context.
    public var modelContext: ModelContext { modelExecutor.modelContext }

    /// The model for `id` in this actor's context, or nil when it does not exist or is of another type.
    ///
    /// ```swift
    /// if let trip = self[tripID, as: Trip.self] { trip.name = "Renamed" }
    /// ```
    public subscript<T: PersistentModel>(id: PersistentIdentifier, as type: T.Type) -> T? {
        if let model: T = modelContext.registeredModel(for: id) { return model }
        return (try? modelContext.existingModel(for: id)) as? T
    }
}

/// Something that owns a `ModelContext` and runs the work that uses it.
public protocol ModelExecutor: AnyObject, Sendable {
    /// The context; use it only on this executor.
    var modelContext: ModelContext { get }
}

/// A model executor that is also a serial executor: actors can run on it.
public protocol SerialModelExecutor: ModelExecutor, SerialExecutor {}

/// Runs an actor's jobs one at a time on a dedicated dispatch queue, not on Swift's cooperative pool:
/// `ModelContext` calls block their thread while PostgreSQL answers, and blocking pool threads would
/// starve other tasks.
///
/// ```swift
/// let executor = DefaultSerialModelExecutor(modelContext: ModelContext(container))
/// ```
public final class DefaultSerialModelExecutor: SerialModelExecutor, @unchecked Sendable {
    // @unchecked: the context is only touched by jobs on `queue`, which runs them one at a time.
    public let modelContext: ModelContext
    private let queue: DispatchQueue

    public init(modelContext: ModelContext) {
        self.modelContext = modelContext
        self.queue = DispatchQueue(label: "pgmodel.model-executor")
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}

/// One serial dispatch queue as an executor, for model actors whose executor is not a serial executor.
final class QueueSerialExecutor: SerialExecutor, @unchecked Sendable {
    static let shared = QueueSerialExecutor()
    private let queue = DispatchQueue(label: "pgmodel.model-actor")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}
