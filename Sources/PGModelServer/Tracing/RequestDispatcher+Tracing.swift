@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelWire
import Tracing

extension RequestDispatcher {
    /// Runs `body`, which answers `request`, in the request's server span when tracing is on: a child of
    /// the client's span when the request carries `traceparent`, else the root of a new trace. The store
    /// call's span and its statements' spans are its children. Without a tracer it only runs `body`.
    ///
    /// ```swift
    /// let response = await dispatcher.traced(request, requestID: ids.next()) { await dispatcher.execute(request, as: user) }
    /// ```
    func traced(_ request: Request, requestID: ServerRequestID, _ body: () async -> Response) async -> Response {
        guard let tracer else { return await body() }
        var parent = ServiceContext.current ?? .topLevel
        if request.traceParent != nil {
            tracer.extract(request, into: &parent, using: RequestTraceExtractor())
        }
        let operation = request.operation.name.rawValue
        let collection = Self.tracedEntity(of: request.operation).map(Naming.snakeCase)
        let span = tracer.startSpan(collection.map { "\(operation) \($0)" } ?? operation, context: parent, ofKind: .server)
        defer { span.end() }
        DatabaseTracing.describe(span, namespace: tracingNamespace, operation: operation, collection: collection)
        span.attributes["pgmodel.request_id"] = requestID.description
        let response = await ServiceContext.$current.withValue(span.context) { await body() }
        switch response.result {
        case .success(.rows(let rows)): DatabaseTracing.returnedRows(rows.count, on: span)
        case .success(.table(let table)): DatabaseTracing.returnedRows(table.rows.count, on: span)
        case .success(.ids(let ids)): DatabaseTracing.returnedRows(ids.count, on: span)
        case .success: break
        case .failure(let error): DatabaseTracing.fail(span, code: error.code.rawValue, sqlState: error.sqlState)
        }
        return response
    }

    /// `db.namespace` of the server's spans: the database and schema its gateway serves.
    var tracingNamespace: String {
        DatabaseTracing.namespace(database: gateway.configuration.database, schema: gateway.configuration.schemaName)
    }

    /// The one entity a request is about, for `db.collection.name`; nil for saves, history and schema work.
    static func tracedEntity(of operation: Request.Operation) -> String? {
        switch operation {
        case .fetch(let request), .fetchTable(let request), .count(let request), .ids(let request): request.entity
        case .share(let change), .unshare(let change): change.record.entity
        case .shares(let record): record.entity
        default: nil
        }
    }
}
