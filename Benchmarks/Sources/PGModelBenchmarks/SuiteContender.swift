import Foundation

/// The workloads of the side-by-side suite. Raw values name the rows of the printed table.
enum SuiteWorkload: String, CaseIterable, Sendable {
    case insert = "insert N models, one save"
    case fetchAll = "fetch all N into objects"
    case pages = "100 pages of 100 rows by an indexed range, sorted"
    case point = "point fetch by an indexed column (p50)"
}

/// One way of storing and reading the suite's table. Each round calls `prepare` (a fresh schema and an
/// empty table, untimed), then the timed workloads it supports in order, then `teardown`. Contenders
/// live in one task, one after another: none is shared across threads.
protocol SuiteContender: AnyObject {
    /// Short, stable: the JSON key and the schema-name prefix.
    var key: String { get }
    /// The column heading of the table.
    var title: String { get }
    var workloads: Set<SuiteWorkload> { get }
    func prepare() async throws
    /// Writes `rows` as N new models (or rows) the way this contender's users would in one go.
    func insert(_ rows: [RecordRow]) async throws
    /// `ANALYZE` of the table after the insert, untimed: the fetches measure the steady state an app's
    /// table is in once autovacuum has seen it. Without statistics the planner guesses, and whether
    /// autovacuum got there first would decide a round's figures by chance.
    func analyze() async throws
    /// Reads every row into objects; returns how many, so a broken path cannot look fast.
    func fetchAll() async throws -> Int
    /// The rows with `lower <= rank < upper`, sorted by rank.
    func page(lower: Int, upper: Int) async throws -> Int
    /// The row whose rank is `rank`.
    func point(rank: Int) async throws -> Int
    func teardown() async throws
}

extension SuiteContender {
    func fetchAll() async throws -> Int { 0 }
    func page(lower: Int, upper: Int) async throws -> Int { 0 }
    func point(rank: Int) async throws -> Int { 0 }
}
