import Foundation
@_spi(PGModelInternals) import PGModel

/// The cost of conflict detection: saves per second of one-row updates, each writer on a thread of its own
/// with its own context and its own row (so no save ever conflicts), with 1 and 16 writers, detection on
/// (`MergePolicy.error`, the default) against off (`.overwrite`, which compares nothing) in the same build
/// and the same run, alternating rounds so drift hits both alike.
///
///   PGModelBenchmarks --conflicts [--quick]
@Model
final class ConflictBenchRow {
    var name: String
    var quantity: Int
    init(name: String) {
        self.name = name
        quantity = 0
    }
}

func runConflictDetectionBenchmark(url: URL, quick: Bool) throws {
    var configuration = ModelConfiguration(url: url)
    configuration.requestTimeout = .seconds(120)
    let container = try ModelContainer(for: ConflictBenchRow.self, configurations: configuration)
    let seconds = quick ? 1.0 : 3.0
    let rounds = quick ? 2 : 5
    print("| writers | detection on (saves/s) | off (saves/s) | on / off |")
    print("|---:|---:|---:|---:|")
    for writers in [1, 16] {
        var on: [Double] = [], off: [Double] = []
        for round in 0..<rounds {
            // Alternate which goes first, so warm-up and drift are shared.
            let order: [MergePolicy] = round % 2 == 0 ? [.error, .overwrite] : [.overwrite, .error]
            for policy in order {
                let rate = try measureUpdates(container: container, writers: writers, policy: policy, seconds: seconds)
                if policy == .error { on.append(rate) } else { off.append(rate) }
            }
        }
        let medianOn = on.sorted()[on.count / 2], medianOff = off.sorted()[off.count / 2]
        print(String(format: "| %d | %.0f | %.0f | %.2f× |", writers, medianOn, medianOff, medianOn / medianOff))
    }
}

/// Saves per second of `writers` threads each updating its own row in a loop for `seconds`.
private func measureUpdates(container: ModelContainer, writers: Int, policy: MergePolicy, seconds: Double) throws -> Double {
    final class Counter: @unchecked Sendable {
        // @unchecked: guarded by `lock`.
        let lock = NSLock()
        var saves = 0
        var failure: (any Error)?
    }
    let counter = Counter()
    let group = DispatchGroup()
    let ready = DispatchGroup()
    let start = DispatchSemaphore(value: 0)
    for w in 0..<writers {
        group.enter()
        ready.enter()
        let thread = Thread {
            defer { group.leave() }
            do {
                let context = ModelContext(container)
                context.mergePolicy = policy
                let row = ConflictBenchRow(name: "writer \(w) \(UUID().uuidString)")
                context.insert(row)
                do {
                    try context.save()
                } catch {
                    ready.leave()
                    throw error
                }
                ready.leave()
                start.wait()
                let end = Date().addingTimeInterval(seconds)
                var saves = 0
                while Date() < end {
                    row.quantity += 1
                    try context.save()
                    saves += 1
                }
                counter.lock.lock(); counter.saves += saves; counter.lock.unlock()
            } catch {
                counter.lock.lock(); counter.failure = error; counter.lock.unlock()
            }
        }
        thread.stackSize = 4 << 20
        thread.start()
    }
    // Every writer has its row before the clock starts.
    ready.wait()
    for _ in 0..<writers { start.signal() }
    group.wait()
    if let failure = counter.failure { throw failure }
    return Double(counter.saves) / seconds
}
