import Dispatch

/// Runs two pieces of CPU work at once, one on the calling thread and one on a Dispatch worker, and
/// returns when both are done. Synchronous, so it fits where a large line is written or read: a
/// server's response encoder and a client's channel handler.
///
/// ```swift
/// let (first, second) = try ParallelPair.run({ try encode(rows[..<middle]) }, { try encode(rows[middle...]) })
/// ```
///
/// The calling thread takes part (`concurrentPerform`), so the second piece runs even when no worker is
/// free: never a deadlock, at worst the two one after the other.
enum ParallelPair {
    static func run<First, Second>(_ first: () throws -> First, _ second: () throws -> Second) throws -> (First, Second) {
        let results = Results<First, Second>()
        withoutActuallyEscaping(first) { first in
            withoutActuallyEscaping(second) { second in
                let work = UncheckedPair(first: first, second: second, results: results)
                DispatchQueue.concurrentPerform(iterations: 2) { index in
                    if index == 0 {
                        work.results.first = Result { try work.first() }
                    } else {
                        work.results.second = Result { try work.second() }
                    }
                }
            }
        }
        guard let first = results.first, let second = results.second else {
            throw JSONReader.Unexpected()
        }
        return (try first.get(), try second.get())
    }

    /// Each piece writes only its own result, and both are read after `concurrentPerform` returns.
    private final class Results<First, Second>: @unchecked Sendable {
        var first: Result<First, any Error>?
        var second: Result<Second, any Error>?
    }

    private struct UncheckedPair<First, Second>: @unchecked Sendable {
        let first: () throws -> First
        let second: () throws -> Second
        let results: Results<First, Second>
    }
}
