import Foundation
@_spi(PGModelInternals) import PGModelCore

/// Where one read goes, decided from what is known of each standby: how far it had replayed when last
/// asked, and whether it failed recently. Pure (no clock, no I/O) so the decision is tested on its own;
/// ``ReplicaSet`` holds one behind a lock and does what it says.
///
/// ```swift
/// var routing = ReplicaRouting(replicas: 2)
/// routing.recordReplayed(LogSequenceNumber("0/20")!, replica: 1)
/// routing.decide(after: LogSequenceNumber("0/10"), now: .now)   // .replica(1): it has replayed past 0/10
/// ```
package struct ReplicaRouting: Sendable {
    /// What to do with one read.
    package enum Decision: Equatable, Sendable {
        /// Read on this standby: it has replayed at least the caller's position (or the caller has none).
        case replica(Int)
        /// Ask this standby how far it has replayed (it was behind when last asked), then read on it if
        /// it has caught up.
        case ask(Int)
        /// Read on the primary: no standby is up.
        case primary
    }

    private struct Replica: Sendable {
        var replayed: LogSequenceNumber?
        var downUntil: ContinuousClock.Instant?
    }

    private var replicas: [Replica]
    /// Where the next choice among equals starts, so reads spread over the standbys.
    private var next = 0

    package init(replicas count: Int) {
        replicas = Array(repeating: Replica(), count: count)
    }

    /// How many standbys there are.
    package var count: Int { replicas.count }

    /// The standby for a read by a caller whose last commit is `position` (`nil`: none yet, any standby
    /// will do). Among the standbys that are up, one known to have replayed that far wins; else one to
    /// ask; with none up, the primary.
    package mutating func decide(after position: LogSequenceNumber?, now: ContinuousClock.Instant) -> Decision {
        let up = (0..<replicas.count).map { (next + $0) % replicas.count }.filter { index in
            guard let until = replicas[index].downUntil else { return true }
            return now >= until
        }
        guard let first = up.first else { return .primary }
        next = (first + 1) % replicas.count
        guard let position else { return .replica(first) }
        if let ready = up.first(where: { replicas[$0].replayed.map { $0 >= position } ?? false }) { return .replica(ready) }
        // The one furthest along is the likeliest to catch up within the wait.
        let furthest = up.max { (replicas[$0].replayed?.rawValue ?? 0) < (replicas[$1].replayed?.rawValue ?? 0) } ?? first
        return .ask(furthest)
    }

    /// Remembers that `replica` had replayed through `position` (positions only move forward).
    package mutating func recordReplayed(_ position: LogSequenceNumber, replica: Int) {
        guard replicas.indices.contains(replica) else { return }
        replicas[replica].replayed = LogSequenceNumber.latest(replicas[replica].replayed, position)
        replicas[replica].downUntil = nil
    }

    /// Takes `replica` out of reads until `until`: it failed (gone, restarting, cancelling reads).
    package mutating func markDown(_ replica: Int, until: ContinuousClock.Instant) {
        guard replicas.indices.contains(replica) else { return }
        replicas[replica].downUntil = until
    }

    /// Whether `replica` is out of reads at `now`.
    package func isDown(_ replica: Int, now: ContinuousClock.Instant) -> Bool {
        guard replicas.indices.contains(replica), let until = replicas[replica].downUntil else { return false }
        return now < until
    }
}
