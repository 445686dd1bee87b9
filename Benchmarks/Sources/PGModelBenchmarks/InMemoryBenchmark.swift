import Foundation
@_spi(PGModelInternals) import PGModel

// In-memory stores without a server: how long the first `isStoredInMemoryOnly` container of a
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
    func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }
    /// (container made, then also one insert, save and count in it)
    func ready() throws -> (created: Double, used: Double) {
        let start = ContinuousClock.now
        let container = try ModelContainer(for: InMemoryNote.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let created = ContinuousClock.now
        let context = ModelContext(container)
        context.insert(InMemoryNote(text: "ready"))
        try context.save()
        guard try context.fetchCount(FetchDescriptor<InMemoryNote>()) == 1 else {
            throw PGModelError(.internalError, "the in-memory container did not keep its note")
        }
        return (milliseconds(created - start), milliseconds(ContinuousClock.now - start))
    }
    let first = try ready()
    var created: [Double] = []
    var used: [Double] = []
    for _ in 0..<count {
        let next = try ready()
        created.append(next.created)
        used.append(next.used)
    }
    created.sort()
    used.sort()
    func f(_ value: Double) -> String { String(format: "%.1f", value) }
    print("| in-memory container | created (ms) | created, then one insert, save and count (ms) |")
    print("|---|---:|---:|")
    print("| first of the process (starts the private cluster) | \(f(first.created)) | \(f(first.used)) |")
    print("| each further one, median of \(count) | \(f(created[count / 2])) | \(f(used[count / 2])) |")
    print("| each further one, slowest | \(f(created.last ?? .nan)) | \(f(used.last ?? .nan)) |")
}
