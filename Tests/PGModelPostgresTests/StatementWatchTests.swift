import NIOCore
import NIOPosix
@_spi(PGModelInternals) import PGModelCore
import PostgresNIO
import Testing

@_spi(PGModelInternals) @testable import PGModelPostgres

/// A statement whose result never comes (PostgresNIO drops a query written to a channel that has just
/// closed) still ends when its deadline aborts the watch, so no pooled connection is held forever.
@Suite("StatementWatch")
struct StatementWatchTests {
    @Test("an abort ends a statement that would never answer, and every later one")
    func abortEndsAStatementThatNeverAnswers() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let never = loop.makePromise(of: PostgresQueryResult.self)
        let watch = StatementWatch()
        let waiting = Task { () -> PGModelError.Code? in
            do {
                _ = try await watch.await(never.futureResult)
                return nil
            } catch {
                return (error as? PGModelError)?.code
            }
        }
        // The abort may come before or after the statement starts waiting: both end it.
        watch.abort(PGModelError(.timeout, "fetch of Trip did not finish within 1 s"))
        #expect(await waiting.value == .timeout)
        let later = loop.makePromise(of: PostgresQueryResult.self)
        await #expect { try await watch.await(later.futureResult) } throws: { ($0 as? PGModelError)?.code == .timeout }
        // The abandoned results are completed here only so NIO does not report leaked promises.
        never.fail(PGModelError(.connectionFailed, "closed"))
        later.fail(PGModelError(.connectionFailed, "closed"))
    }
}
