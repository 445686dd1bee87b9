import NIOConcurrencyHelpers

/// What one run of a ``withContinuousObservation(options:isolation:apply:)`` closure read from PGModel's own
/// observers (``HistoryObserver``, ``ResultsObserver``), so that the run can tell whether one of them
/// changed after the closure read it and before observation tracking took effect.
///
/// `withObservationTracking` installs its `onChange` when the closure returns: a change in between — a
/// history event arriving while the seed's `ServerSync` fetched the previous one — would otherwise never
/// run the closure again, and the sync would sit on that transaction until the next one. Each observer
/// keeps a ``MutationEpoch``; after tracking is installed, the run checks the epochs it saw.
///
/// ```swift
/// let log = ObservationReadLog()
/// ObservationReadLog.$current.withValue(log) { withObservationTracking { body() } onChange: { … } }
/// if log.changedSinceRead { … run again … }
/// ```
final class ObservationReadLog: @unchecked Sendable {
    // @unchecked: `reads` is behind `lock`.
    /// The log of the run in progress on this task or thread, if any.
    @TaskLocal static var current: ObservationReadLog?

    private let lock = NIOLock()
    private var reads: [(epoch: MutationEpoch, seen: UInt64)] = []

    /// Notes that the run read an observer whose epoch was `epoch.value` just before.
    func record(_ epoch: MutationEpoch) {
        let seen = epoch.value
        lock.withLock { reads.append((epoch, seen)) }
    }

    /// Whether an observer the run read has changed since, or is changing now.
    var changedSinceRead: Bool {
        lock.withLock { reads.contains { $0.epoch.hasChanged(since: $0.seen) } }
    }
}

/// A count of an observer's changes that is odd while one is under way (a sequence lock's counter):
/// a reader that saw an even value knows, by comparing later, whether anything changed since, and one that
/// saw an odd value knows a change was under way.
///
/// ```swift
/// epoch.change { registrar.withMutation(of: self, keyPath: \.eventCounter) { counter += 1 } }
/// ```
final class MutationEpoch: Sendable {
    private let counter = NIOLockedValueBox<UInt64>(0)

    var value: UInt64 { counter.withLockedValue { $0 } }

    /// Runs `mutation` (the observer's `withMutation` calls) with the epoch odd, then even again.
    func change<T>(_ mutation: () throws -> T) rethrows -> T {
        counter.withLockedValue { $0 &+= 1 }
        defer { counter.withLockedValue { $0 &+= 1 } }
        return try mutation()
    }

    func hasChanged(since seen: UInt64) -> Bool {
        let now = value
        return now != seen || now & 1 == 1
    }
}
