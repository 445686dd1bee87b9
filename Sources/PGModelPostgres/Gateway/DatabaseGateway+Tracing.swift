@_spi(PGModelInternals) import PGModelCore
import Tracing

extension DatabaseGateway {
    /// Runs one store call (`operation` on `entity`'s table) in a span of its own, a child of the task's
    /// current context (the app's span, or the server's span of the request), when tracing is on; the
    /// call's statements are its children. Without a tracer it only runs `body`.
    ///
    /// ```swift
    /// try await traced("count", entity: request.entity) { try await engine.count(…) }
    /// ```
    func traced<T>(_ operation: String, entity: String?, rows: ((T) -> Int)? = nil,
                   _ body: () async throws -> T) async throws -> T {
        guard let tracer else { return try await body() }
        let collection = entity.map(Naming.snakeCase)
        let span = tracer.startSpan(collection.map { "\(operation) \($0)" } ?? operation,
                                    context: ServiceContext.current ?? .topLevel, ofKind: .client)
        defer { span.end() }
        DatabaseTracing.describe(span, namespace: tracingNamespace, operation: operation, collection: collection)
        if let entity { span.attributes["pgmodel.entity"] = entity }
        do {
            let result = try await ServiceContext.$current.withValue(span.context) { try await body() }
            if let rows { DatabaseTracing.returnedRows(rows(result), on: span) }
            return result
        } catch {
            DatabaseTracing.fail(span, with: error)
            throw error
        }
    }
}
