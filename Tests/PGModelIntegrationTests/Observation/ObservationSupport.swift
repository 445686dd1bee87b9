import Dispatch
import Foundation
import Observation
@_spi(PGModelInternals) import PGModel
import PGModelTesting

/// Blocks a test thread (never a cooperative one: use `offCooperativePool`) until an observation fires,
/// with a generous timeout that fails the test instead of hanging it.
final class ChangeLatch: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    func signal() { semaphore.signal() }

    /// `true` when signalled in time.
    func wait(seconds: Double = 20) -> Bool {
        semaphore.wait(timeout: .now() + seconds) == .success
    }
}

/// Tracks what `read` reads, then runs `change`, then waits until one of the tracked properties changed.
func waitForChange(reading read: () -> Void, after change: () throws -> Void, seconds: Double = 20) rethrows -> Bool {
    let latch = ChangeLatch()
    withObservationTracking(read, onChange: { latch.signal() })
    try change()
    return latch.wait(seconds: seconds)
}

/// Waits until `condition` holds, re-checking each time `read`'s observables change.
func waitUntil(reading read: @escaping () -> Void, seconds: Double = 20, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        let latch = ChangeLatch()
        withObservationTracking(read, onChange: { latch.signal() })
        if condition() { return true }
        let left = deadline.timeIntervalSinceNow
        guard left > 0, latch.wait(seconds: left) else { return condition() }
    }
    return true
}
