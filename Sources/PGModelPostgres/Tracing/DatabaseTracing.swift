@_spi(PGModelInternals) import PGModelCore
import Tracing

/// What the spans of PGModel's database work share: which tracer they go to, and OpenTelemetry's
/// database attributes (`db.system.name`, `db.namespace`, `db.operation.name`, `db.collection.name`,
/// `db.response.returned_rows`, `error.type`). Attributes name operations, tables and codes, never a bound
/// value or a predicate's constant.
///
/// ```swift
/// guard let tracer = DatabaseTracing.activeTracer(configuration.tracer) else { return try await body() }
/// let span = tracer.startSpan("fetch trip", context: ServiceContext.current ?? .topLevel, ofKind: .client)
/// DatabaseTracing.describe(span, namespace: "app|public", operation: "fetch", collection: "trip")
/// ```
package enum DatabaseTracing {
    /// The tracer spans go to: `configured`, else the process's (`InstrumentationSystem.tracer`); nil when
    /// that is the no-op tracer, so that an untraced call skips every span, attribute and context switch.
    ///
    /// ```swift
    /// let tracer = DatabaseTracing.activeTracer(nil)   // nil unless the process bootstrapped a tracer
    /// ```
    package static func activeTracer(_ configured: (any Tracer)?) -> (any Tracer)? {
        let tracer = configured ?? InstrumentationSystem.tracer
        return tracer is NoOpTracer ? nil : tracer
    }

    /// `db.namespace` of PostgreSQL: the database and the schema, as OpenTelemetry's conventions join them.
    ///
    /// ```swift
    /// DatabaseTracing.namespace(database: "app", schema: "public")   // "app|public"
    /// ```
    package static func namespace(database: String, schema: String) -> String {
        "\(database)|\(schema)"
    }

    /// Sets the attributes every database span carries.
    ///
    /// ```swift
    /// DatabaseTracing.describe(span, namespace: "app|public", operation: "count", collection: "trip")
    /// ```
    package static func describe(_ span: any Span, namespace: String, operation: String, collection: String?) {
        span.updateAttributes { attributes in
            attributes["db.system.name"] = "postgresql"
            // The name of the conventions before 1.26, which many backends still group by.
            attributes["db.system"] = "postgresql"
            attributes["db.namespace"] = namespace
            attributes["db.operation.name"] = operation
            if let collection { attributes["db.collection.name"] = collection }
        }
    }

    /// `db.response.returned_rows`.
    ///
    /// ```swift
    /// DatabaseTracing.returnedRows(rows.count, on: span)
    /// ```
    package static func returnedRows(_ count: Int, on span: any Span) {
        span.attributes["db.response.returned_rows"] = SpanAttribute.int64(Int64(count))
    }

    /// Marks `span` failed with `error`'s stable code as `error.type` (and PostgreSQL's SQLSTATE as
    /// `db.response.status_code`). Only the code goes in: a message is for people and stays in the answer.
    ///
    /// ```swift
    /// DatabaseTracing.fail(span, with: PGModelError(.notFound, "…"))   // error.type = not_found
    /// ```
    package static func fail(_ span: any Span, with error: any Error) {
        fail(span, code: errorType(of: error), sqlState: (error as? PGModelError)?.sqlState)
    }

    /// Marks `span` failed with `code` (and `sqlState`).
    ///
    /// ```swift
    /// DatabaseTracing.fail(span, code: "timeout", sqlState: nil)
    /// ```
    package static func fail(_ span: any Span, code: String, sqlState: String?) {
        span.updateAttributes { attributes in
            attributes["error.type"] = code
            if let sqlState { attributes["db.response.status_code"] = sqlState }
        }
        span.setStatus(SpanStatus(code: .error, message: code))
    }

    /// The `error.type` of `error`: a PGModelError's code, else the error's type name.
    static func errorType(of error: any Error) -> String {
        if let error = error as? PGModelError { return error.code.rawValue }
        if error is CancellationError { return "cancelled" }
        return String(describing: type(of: error))
    }

    /// The first keyword of `sql` (`SELECT`, `INSERT`, `WITH`…): `db.operation.name` of a statement's span.
    ///
    /// ```swift
    /// DatabaseTracing.statementOperation("SELECT \"id\" FROM …")   // "SELECT"
    /// ```
    package static func statementOperation(_ sql: String) -> String {
        let word = sql.utf8.drop(while: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "(") })
            .prefix(while: { ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) || ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) })
            .prefix(16)
        return String(decoding: word, as: UTF8.self).uppercased()
    }
}
