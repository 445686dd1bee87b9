import NIOCore

/// A TaskExecutor that runs jobs on one NIO event loop: a task with it as preference runs where its
/// connection's I/O happens, and never needs the cooperative pool (which synchronous calls may block).
///
/// ```swift
/// Task(executorPreference: EventLoopTaskExecutor(eventLoop: connection.eventLoop)) { … }
/// ```
@_spi(PGModelInternals) public final class EventLoopTaskExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: the only state is the event loop, which is thread-safe.
    public let eventLoop: any EventLoop

    public init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
