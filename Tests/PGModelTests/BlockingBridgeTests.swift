import Foundation
import NIOCore
import NIOPosix
@_spi(PGModelInternals) @testable import PGModel
@_spi(PGModelInternals) @testable import PGModelClient
@_spi(PGModelInternals) @testable import PGModelIO
@_spi(PGModelInternals) @testable import PGModelPostgres
import Testing
@_spi(PGModelInternals) import PGModelCore

/// The bridge must run async work to completion while the calling thread — possibly a cooperative
/// one — is blocked, and must refuse to block the event loop it runs on.
@Suite("BlockingBridge")
struct BlockingBridgeTests {
    let bridge = BlockingBridge(eventLoop: MultiThreadedEventLoopGroup.singleton.next())

    @Test func returnsValueAndRunsOnTheEventLoop() throws {
        let loop = bridge.eventLoop
        let onLoop = try bridge.run { loop.inEventLoop }
        #expect(onLoop)
    }

    @Test func awaitsFuturesAndSleepsWithoutTheCooperativePool() throws {
        let loop = bridge.eventLoop
        let value = try bridge.run { () async throws -> Int in
            let a = try await loop.scheduleTask(in: .milliseconds(5)) { 20 }.futureResult.get()
            try await Task.sleep(for: .milliseconds(5))
            return a + 22
        }
        #expect(value == 42)
    }

    @Test func rethrowsErrors() {
        struct Boom: Error {}
        #expect(throws: Boom.self) { try bridge.run { () async throws -> Int in throw Boom() } }
    }

    @Test func manyConcurrentBlockingCallersAllFinish() async throws {
        // More blocked callers than cooperative threads: with work on the cooperative pool this deadlocks.
        let bridge = self.bridge
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<8 {
                group.addTask { try bridge.run { try await Task.sleep(for: .milliseconds(10)); return i } }
            }
            return try await group.reduce(0, +)
        }
        #expect(total == 28)
    }

    @Test func refusesToBlockAnyEventLoopNotOnlyItsOwn() throws {
        // A server handler or another container's callback runs on some other loop: blocking it would
        // stall every channel it serves, so the call throws at once instead.
        let bridge = self.bridge
        let other = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? other.syncShutdownGracefully() }
        for loop in [other.next(), MultiThreadedEventLoopGroup.singleton.any()] where !(loop === bridge.eventLoop) {
            let started = ContinuousClock.now
            let result = try loop.submit { Result { try bridge.run { try await Task.sleep(for: .seconds(5)); return 1 } } }.wait()
            #expect(throws: PGModelError.self) { try result.get() }
            if case .failure(let error as PGModelError) = result { #expect(error.code == .wouldDeadlock) }
            #expect(ContinuousClock.now - started < .seconds(2), "refused at once, not after the work")
        }
    }

    @Test func stopsWaitingAtItsDeadlineWithTimeout() throws {
        let bridge = BlockingBridge(eventLoop: MultiThreadedEventLoopGroup.singleton.next(), timeout: .milliseconds(100), grace: .milliseconds(100))
        let started = ContinuousClock.now
        // Work that never ends by itself (it ignores cancellation) must not hold the caller forever.
        #expect {
            try bridge.run(timeout: .milliseconds(100)) { () async throws -> Int in
                try? await Task.sleep(for: .seconds(60))
                return 1
            }
        } throws: { ($0 as? PGModelError)?.code == .timeout }
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(200) && waited < .seconds(5))
    }

    @Test func refusesToBlockItsOwnEventLoop() throws {
        let bridge = self.bridge
        let result = try bridge.eventLoop.submit {
            Result { try bridge.run { 1 } }
        }.wait()
        #expect(throws: PGModelError.self) { try result.get() }
    }
}
