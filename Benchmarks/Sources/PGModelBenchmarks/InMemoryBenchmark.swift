import Foundation
import PGModel

// Issue 16's in-memory stores without a server: how long the first `isStoredInMemoryOnly` container of a
// process takes (it starts the private cluster) and each further one (a schema in the running cluster).
//
//   env -u DATABASE_URL PGModelBenchmarks --in-memory [N]
//
// Run it twice: the first run on a machine makes the cluster template (initdb, once per machine and
// PostgreSQL version); every later process copies it. Delete /tmp/pgmodel-ephemeral-*/template-* to
// measure the cold case again.

@Model final class InMemoryNote {
    var text: String
    init(text: String) { self.text = text }
}

func runInMemoryBenchmark(arguments: [String]) throws {
    guard ProcessInfo.processInfo.environment["DATABASE_URL"] == nil else {
        FileHandle.standardError.write(Data("unset DATABASE_URL: this measures the private cluster\n".utf8))
        exit(2)
    }
    let count = arguments.first.flatMap(Int.init) ?? 20
    func ready() throws -> Double {
        let start = ContinuousClock.now
        let container = try ModelContainer(for: InMemoryNote.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        context.insert(InMemoryNote(text: "ready"))
        try context.save()
        guard try context.fetchCount(FetchDescriptor<InMemoryNote>()) == 1 else {
            throw PGModelError(.internalError, "the in-memory container did not keep its note")
        }
        return Double((ContinuousClock.now - start).components.attoseconds) / 1e15
            + Double((ContinuousClock.now - start).components.seconds) * 1000
    }
    let first = try ready()
    var further: [Double] = []
    for _ in 0..<count { further.append(try ready()) }
    further.sort()
    print("| in-memory container ready (create, insert, save, count) | ms |")
    print("|---|---:|")
    print("| first of the process (starts the private cluster) | \(String(format: "%.0f", first)) |")
    print("| each further one, median of \(count) | \(String(format: "%.1f", further[further.count / 2])) |")
    print("| each further one, slowest | \(String(format: "%.1f", further.last ?? .nan)) |")
}
