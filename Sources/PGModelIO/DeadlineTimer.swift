#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
@_spi(PGModelInternals) import PGModelCore

/// Fires callbacks at their deadlines from one thread of its own.
///
/// A service request's ``Deadline`` used to sleep in a task of its own: every request cost two more jobs
/// on Swift's thread pool (the timer task, then its wake-up to end when cancelled), a visible share of a
/// point fetch. Here scheduling and cancelling take a lock and wake nothing,
/// unless the new deadline is earlier than the one the thread sleeps until — rare, since requests'
/// deadlines mostly come in the order they were set. Cancelled entries are dropped lazily, as soon as
/// they reach the front, so the queue holds about as many entries as there are calls in flight.
///
/// ```swift
/// let token = DeadlineTimer.shared.schedule(after: .seconds(30)) { outcome.expire() }
/// // … the work finished first:
/// DeadlineTimer.shared.cancel(token)
/// ```
final class DeadlineTimer: @unchecked Sendable {
    // @unchecked: every stored property below `condition` is read and written with `mutex` held.
    static let shared = DeadlineTimer()

    /// One scheduled callback, for ``cancel(_:)``.
    struct Token: Sendable {
        fileprivate let id: UInt64
    }

    private struct Entry {
        var deadline: UInt64
        var id: UInt64

        func isEarlier(than other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : id < other.id
        }
    }

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    /// A binary min-heap by deadline; it may hold cancelled entries (not in `pending`).
    private var heap: [Entry] = []
    private var pending: [UInt64: @Sendable () -> Void] = [:]
    private var nextID: UInt64 = 0
    /// The deadline the thread waits for; `.max` while it waits for any entry, or is not started.
    private var sleepingUntil: UInt64 = .max
    private var isRunning = false

    /// A timer with a thread of its own; the service uses ``shared``, tests their own.
    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        #if canImport(Glibc)
        // Deadlines are on the monotonic clock: a wall-clock change must not fire or delay them.
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
        #else
        pthread_cond_init(condition, nil)
        #endif
    }

    /// Runs `fire` once `delay` has passed, on the timer's thread, unless cancelled first. `fire` must
    /// return quickly (resume a continuation, cancel a task): later deadlines wait for it.
    func schedule(after delay: Duration, _ fire: @escaping @Sendable () -> Void) -> Token {
        let deadline = Self.now().addingReportingOverflow(Self.nanoseconds(delay))
        let at = deadline.overflow ? UInt64.max - 1 : deadline.partialValue
        pthread_mutex_lock(mutex)
        dropCancelledFront()
        nextID &+= 1
        let id = nextID
        pending[id] = fire
        push(Entry(deadline: at, id: id))
        if !isRunning {
            isRunning = true
            let thread = Thread { [self] in runLoop() }
            thread.name = "PGModel deadlines"
            thread.start()
        } else if at < sleepingUntil {
            pthread_cond_signal(condition)
        }
        pthread_mutex_unlock(mutex)
        return Token(id: id)
    }

    /// Forgets `token`'s callback if it has not fired; its entry leaves the queue when it reaches the front.
    func cancel(_ token: Token) {
        pthread_mutex_lock(mutex)
        pending[token.id] = nil
        pthread_mutex_unlock(mutex)
    }

    /// The callbacks scheduled and neither fired nor cancelled.
    var pendingCount: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return pending.count
    }

    private func runLoop() {
        pthread_mutex_lock(mutex)
        while true {
            dropCancelledFront()
            guard let front = heap.first else {
                sleepingUntil = .max
                pthread_cond_wait(condition, mutex)
                continue
            }
            let now = Self.now()
            if front.deadline <= now {
                popFront()
                let fire = pending.removeValue(forKey: front.id)
                pthread_mutex_unlock(mutex)
                fire?()
                pthread_mutex_lock(mutex)
                continue
            }
            sleepingUntil = front.deadline
            wait(until: front.deadline, now: now)
            sleepingUntil = .max
        }
    }

    /// Waits on `condition` (with `mutex` held) until signalled or `deadline`.
    private func wait(until deadline: UInt64, now: UInt64) {
        #if canImport(Glibc)
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        _ = pthread_cond_timedwait(condition, mutex, &time)
        #else
        let delay = deadline - now
        var time = timespec(tv_sec: Int(delay / 1_000_000_000), tv_nsec: Int(delay % 1_000_000_000))
        _ = pthread_cond_timedwait_relative_np(condition, mutex, &time)
        #endif
    }

    private func dropCancelledFront() {
        while let front = heap.first, pending[front.id] == nil { popFront() }
    }

    private func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].isEarlier(than: heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func popFront() {
        guard !heap.isEmpty else { return }
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var earliest = parent
            if left < heap.count, heap[left].isEarlier(than: heap[earliest]) { earliest = left }
            if right < heap.count, heap[right].isEarlier(than: heap[earliest]) { earliest = right }
            guard earliest != parent else { return }
            heap.swapAt(parent, earliest)
            parent = earliest
        }
    }

    /// Nanoseconds on the clock the condition waits on.
    private static func now() -> UInt64 {
        #if canImport(Glibc)
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
        #else
        return clock_gettime_nsec_np(CLOCK_UPTIME_RAW)
        #endif
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let whole = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        guard !whole.overflow else { return .max }
        let total = whole.partialValue.addingReportingOverflow(UInt64(max(0, attoseconds) / 1_000_000_000))
        return total.overflow ? .max : total.partialValue
    }
}
