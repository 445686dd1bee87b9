import Foundation
@_spi(PGModelInternals) import PGModel
import PGModelTestSupport
import Testing
import PGModelTesting

/// The randomized graph edits inside a custom migration stage: a store is populated at version 1 by
/// random edits, then a plan's `willMigrate` goes on editing it at random in the migration's own
/// context, checked after every save against the plain model; after the migration the tables hold
/// exactly the models the plain model says.
///
/// `PGMODEL_GRAPH_MIGRATION_SEEDS` (default 4) sizes it.
@Suite("Graph edits: randomized inside a custom migration stage")
struct GraphEditMigrationTests {
    static var seedCount: Int { ProcessInfo.processInfo.environment["PGMODEL_GRAPH_MIGRATION_SEEDS"].flatMap(Int.init) ?? 4 }

    @Test func randomEditsInsideWillMigrate() async throws {
        let base = UInt64.random(in: 1...(UInt64.max / 2))
        for seed in (0..<UInt64(Self.seedCount)).map({ base &+ $0 }) {
            let schema = TestDatabase.uniqueSchema("gmig")
            let url = try TestDatabase.schemaURL(schema)
            let failure: GraphEditFailure? = try await offCooperativePool {
                var generator = SeededGenerator(state: seed)
                let before = GraphEditScript.generate(count: 40, using: &generator)
                let container = try ModelContainer(for: Schema(versionedSchema: EditGraph.self), configurations: ModelConfiguration(url: url))
                var runner = GraphEditRunner(context: ModelContext(container), makeReader: { ModelContext(container) })
                if let failure = runner.run(before) { return GraphEditFailure(step: failure.step, message: "before the migration: \(failure.message)") }
                let during = GraphEditScript.generate(count: 50, existing: runner.committed, next: before.count + 1, using: &generator)
                EditGraphMigration.pending.set(runner, during)
                _ = try ModelContainer(for: Schema(versionedSchema: EditGraphV2.self), migrationPlan: EditGraphPlan.self,
                                       configurations: ModelConfiguration(url: url))
                return EditGraphMigration.pending.outcome()
            }
            if let failure {
                Issue.record("seed \(seed): \(failure.message)")
                return
            }
            let committed = try #require(EditGraphMigration.pending.committed())
            for (table, kinds) in [("graph_folder", [PlainGraph.Kind.folder, .archive]), ("graph_doc", [.doc]), ("graph_tag", [.tag]),
                                   ("graph_cover", [.cover]), ("graph_lock", [.lock]), ("graph_note", [.note])] {
                let expected = committed.nodes.values.filter { kinds.contains($0.kind) }.count
                #expect(try await Inspect.count("SELECT count(*) FROM \(schema).\(table)") == expected, "seed \(seed): \(table)")
            }
            #expect(try await Inspect.count("SELECT count(*) FROM \(schema).graph_doc WHERE pages = 1") == committed.ids(of: .doc).count)
            try await Inspect.drop(schema)
        }
    }
}

/// The runner handed from the test to the stage and back (the stage is a static closure).
final class EditGraphMigration: @unchecked Sendable {
    // @unchecked: every field is touched under `lock`; the runner is used by one thread at a time.
    static let pending = EditGraphMigration()
    private let lock = NSLock()
    private var runner: GraphEditRunner?
    private var edits: [GraphEdit] = []
    private var failure: GraphEditFailure?

    func set(_ runner: GraphEditRunner, _ edits: [GraphEdit]) {
        lock.withLock { self.runner = runner; self.edits = edits; failure = nil }
    }

    func outcome() -> GraphEditFailure? { lock.withLock { failure ?? (runner == nil ? GraphEditFailure(step: 0, message: "willMigrate did not run") : nil) } }
    func committed() -> PlainGraph? { lock.withLock { runner?.committed } }

    /// Goes on with the runner's edits in the stage's context.
    func runInStage(_ context: ModelContext) {
        lock.withLock {
            guard var runner else { return }
            do {
                runner.makeReader = { ModelContext(context.container) }
                try runner.restart(with: context)
                if let found = runner.run(edits) { failure = GraphEditFailure(step: found.step, message: "in willMigrate: \(found.message)") }
            } catch let found as GraphEditFailure {
                failure = GraphEditFailure(step: 0, message: "in willMigrate, reading the store: \(found.message)")
            } catch {
                failure = GraphEditFailure(step: 0, message: "in willMigrate: \(error)")
            }
            self.runner = runner
        }
    }
}

enum EditGraphPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [EditGraph.self, EditGraphV2.self] }
    static var stages: [MigrationStage] {
        [.custom(fromVersion: EditGraph.self, toVersion: EditGraphV2.self,
                 willMigrate: { context in EditGraphMigration.pending.runInStage(context) }, didMigrate: nil)]
    }
}
