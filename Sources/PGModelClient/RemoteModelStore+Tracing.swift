@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelWire
import Tracing

extension RemoteModelStore {
    /// The tracer of a new store: `configured`, else the process's (`InstrumentationSystem.tracer`); nil
    /// when that is the no-op tracer, so that an untraced call makes no span and sends no trace fields.
    static func activeTracer(_ configured: (any Tracer)?) -> (any Tracer)? {
        let tracer = configured ?? InstrumentationSystem.tracer
        return tracer is NoOpTracer ? nil : tracer
    }

    /// Runs one call of `operation` in a client span when tracing is on: a child of the task's current
    /// context (the app's span), whose context the request carries to the server (``traceFields()``).
    ///
    /// ```swift
    /// try await traced(.count(request)) { try await untracedCall(.count(request), timeout: nil) }
    /// ```
    func traced<T>(_ operation: Request.Operation, rows: ((T) -> Int?)? = nil, _ body: () async throws -> T) async throws -> T {
        guard let tracer else { return try await body() }
        let name = operation.name.rawValue
        let collection = Self.tracedEntity(of: operation).map(Naming.snakeCase)
        let span = tracer.startSpan(collection.map { "\(name) \($0)" } ?? name, context: ServiceContext.current ?? .topLevel, ofKind: .client)
        defer { span.end() }
        let (endpoint, storeName) = (endpoint, storeName)
        span.updateAttributes { attributes in
            attributes["db.system.name"] = "postgresql"
            attributes["db.system"] = "postgresql"
            attributes["db.operation.name"] = name
            if let collection { attributes["db.collection.name"] = collection }
            if let storeName { attributes["db.namespace"] = storeName }
            attributes["server.address"] = endpoint.host
            attributes["server.port"] = SpanAttribute.int64(Int64(endpoint.port))
        }
        do {
            let result = try await ServiceContext.$current.withValue(span.context) { try await body() }
            if let count = rows?(result) { span.attributes["db.response.returned_rows"] = SpanAttribute.int64(Int64(count)) }
            return result
        } catch {
            let code = (error as? PGModelError)?.code.rawValue ?? String(describing: type(of: error))
            span.updateAttributes { attributes in
                attributes["error.type"] = code
                if let requestID = (error as? PGModelError)?.requestID { attributes["pgmodel.request_id"] = requestID }
            }
            span.setStatus(SpanStatus(code: .error, message: code))
            throw error
        }
    }

    /// The rows a result brings, for `db.response.returned_rows`.
    static func returnedRows(_ result: ResponseResult) -> Int? {
        switch result {
        case .rows(let rows): rows.count
        case .table(let table): table.rows.count
        case .ids(let ids): ids.count
        default: nil
        }
    }

    /// The W3C Trace Context of the task's current span, as a request's `traceparent` and `tracestate`;
    /// nils without a tracer or a span. A value past the protocol's bounds is left out rather than sent
    /// to be refused: the request matters more than its trace.
    ///
    /// ```swift
    /// (request.traceParent, request.traceState) = traceFields()
    /// ```
    func traceFields() -> (String?, String?) {
        guard let tracer, let context = ServiceContext.current else { return (nil, nil) }
        var fields = TraceFields()
        tracer.inject(context, into: &fields, using: TraceFieldsInjector())
        guard let parent = fields.parent, parent.utf8.count <= WireProtocol.maxTraceParentBytes else { return (nil, nil) }
        let state = fields.state.flatMap { $0.utf8.count <= WireProtocol.maxTraceStateBytes ? $0 : nil }
        return (parent, state)
    }

    /// The one entity a request is about, for `db.collection.name`.
    static func tracedEntity(of operation: Request.Operation) -> String? {
        switch operation {
        case .fetch(let request), .fetchTable(let request), .count(let request), .ids(let request): request.entity
        case .share(let change), .unshare(let change): change.record.entity
        case .shares(let record): record.entity
        default: nil
        }
    }
}

/// What a tracer injects for a request: the two W3C Trace Context fields the line protocol carries.
struct TraceFields: Sendable {
    var parent: String?
    var state: String?
}

/// Puts `traceparent` and `tracestate` into ``TraceFields``; other keys a tracer injects (baggage, its own
/// headers) have no field in the protocol and are dropped.
struct TraceFieldsInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout TraceFields) {
        switch key.lowercased() {
        case "traceparent": carrier.parent = value
        case "tracestate": carrier.state = value
        default: break
        }
    }
}
