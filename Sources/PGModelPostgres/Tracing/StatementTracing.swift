import Tracing

/// Where the spans of single SQL statements go: one span per statement a store call sends, a child of the
/// call's span, with the parameterized SQL as `db.query.text` (the `$1`, `$2` placeholders; bound values
/// never). Held by the pool and handed to each ``EngineConnection`` it leases; nil when tracing is off.
///
/// ```swift
/// let tracing = StatementTracing(tracer: tracer, namespace: "app|public")
/// let rows = try await tracing.run(statement.sql) { try await read() }
/// ```
package struct StatementTracing: Sendable {
    let tracer: any Tracer
    let namespace: String

    package init(tracer: any Tracer, namespace: String) {
        self.tracer = tracer
        self.namespace = namespace
    }

    /// Runs `body`, which sends `sql`, in a span; `rows` tells how many rows it returned.
    ///
    /// ```swift
    /// try await tracing.run("SELECT count(*) FROM \"trip\"", rows: { $0.count }) { try await query() }
    /// ```
    func run<T>(_ sql: String, rows: ((T) -> Int)? = nil, _ body: () async throws -> T) async throws -> T {
        let operation = DatabaseTracing.statementOperation(sql)
        let span = tracer.startSpan(operation.isEmpty ? "sql" : operation, context: ServiceContext.current ?? .topLevel, ofKind: .client)
        defer { span.end() }
        DatabaseTracing.describe(span, namespace: namespace, operation: operation, collection: nil)
        span.attributes["db.query.text"] = sql
        do {
            let result = try await body()
            if let rows { DatabaseTracing.returnedRows(rows(result), on: span) }
            return result
        } catch {
            DatabaseTracing.fail(span, with: error)
            throw error
        }
    }
}
