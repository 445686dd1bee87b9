import NIOCore

/// A TaskExecutor that runs jobs on one NIO event loop: a task with it as preference runs where its
/// connection's I/O happens, and never needs the cooperative pool (which synchronous calls may block).
///
/// ```swift
/// Task(executorPreference: EventLoopTaskExecutor(eventLoop: connection.eventLoop)) { … }
/// ```
package final class EventLoopTaskExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: the only state is the event loop, which is thread-safe.
    package let eventLoop: any EventLoop

    package init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
