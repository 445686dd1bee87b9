import Foundation
import InMemoryTracing
import Logging
import NIOPosix
@_spi(PGModelInternals) import PGModelClient
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) import PGModelPostgres
@_spi(PGModelInternals) import PGModelServer
@_spi(PGModelInternals) import PGModelWire
import Testing
import Tracing

/// Traces across the service: the app's call, the server's request, the store call and its SQL in one
/// trace, with OpenTelemetry's database attributes and no bound value; and the request ids of error
/// answers, found in the server's log.
@Suite("Tracing and request logs through a live service")
struct TracingTests {
    @Test("one trace from RemoteModelStore through the server's request and store call to its SQL")
    func oneTraceAcrossTheService() async throws {
        let tracer = W3CInMemoryTracer()
        let user = try await ServerTestHarness.makeUser("trace")
        let entity = ServerTestHarness.uniqueEntity("Traced")
        let table = Naming.snakeCase(entity)
        let secret = "never-in-a-span-\(ServerTestHarness.uniqueSuffix())"
        try await ServerTestHarness.withServer(configure: { $0.tracer = tracer }) { port in
            let store = try RemoteModelStore(url: try ServerRemoteStoreTests.url(user, port: port), tracer: tracer)
            defer { Task { await store.close() } }
            try await ServerTestHarness.register(ServerRemoteStoreTests.schema(entity))
            try await store.prepare(ServerRemoteStoreTests.schema(entity))
            _ = try await store.save(SaveRequest(inserts: [ServerRemoteStoreTests.row(entity, secret, rank: 987_654_321)]))
            tracer.memory.clearAll()

            let rows = try await store.fetch(FetchRequest(entity: entity, predicate: .and([
                .compare(.equal, .key("code"), .value(.string(secret))), .compare(.greater, .key("rank"), .value(.int(987_654_320))),
            ])))
            #expect(rows.count == 1)
        }
        let spans = tracer.memory.finishedSpans
        let client = try #require(spans.first { $0.kind == .client && $0.attributes["server.address"] != nil && $0.operationName == "fetch \(table)" },
                                  "\(spans.map(\.operationName))")
        let server = try #require(spans.first { $0.kind == .server && $0.parentSpanID == client.spanID }, "the server's span is the client span's child")
        let store = try #require(spans.first { $0.parentSpanID == server.spanID && $0.operationName == "fetch \(table)" }, "the store call's span is the server span's child")
        let statements = spans.filter { $0.parentSpanID == store.spanID }
        #expect(!statements.isEmpty, "the store call's SQL are its children")
        for span in [client, server, store] + statements {
            #expect(span.traceID == client.traceID, "one trace: \(span.operationName)")
            #expect(Self.string(span.attributes, "db.system.name") == "postgresql", "\(span.operationName)")
            #expect(Self.string(span.attributes, "db.operation.name") != nil, "\(span.operationName)")
        }
        for span in [client, server, store] {
            #expect(Self.string(span.attributes, "db.collection.name") == table)
            #expect(Self.int(span.attributes, "db.response.returned_rows") == 1)
        }
        #expect(Self.string(server.attributes, "db.namespace")?.contains("|") == true, "database|schema")
        #expect(Self.string(server.attributes, "pgmodel.request_id") != nil)
        let select = try #require(statements.compactMap { Self.string($0.attributes, "db.query.text") }.first { $0.contains("SELECT") })
        #expect(select.contains("$1"), "parameterized: \(select)")
        // No bound value anywhere: neither the predicate's constants nor the saved row's.
        for span in spans {
            span.attributes.forEach { key, attribute in
                let text = "\(attribute)"
                #expect(!text.contains(secret) && !text.contains("98765432"), "\(span.operationName) \(key) = \(text)")
            }
        }
    }

    @Test("the direct store's calls are spans of their own, their SQL statements children, no value in them")
    func directStoreSpans() async throws {
        let tracer = W3CInMemoryTracer()
        var configuration = try PostgresStoreConfiguration.parse(try ServerTestHarness.databaseURL())
        configuration.schemaName = "trace_\(ServerTestHarness.uniqueSuffix())"
        configuration.tracer = tracer
        let store = PostgresModelStore(configuration: configuration, eventLoop: MultiThreadedEventLoopGroup.singleton.next(),
                                       dropsSchemaOnClose: true)
        let entity = ServerTestHarness.uniqueEntity("Direct")
        let table = Naming.snakeCase(entity)
        let secret = "never-in-a-span-\(ServerTestHarness.uniqueSuffix())"
        do {
            try await store.prepare(ServerRemoteStoreTests.schema(entity))
            tracer.memory.clearAll()
            let count = try await store.count(FetchRequest(entity: entity, predicate: .compare(.equal, .key("code"), .value(.string(secret)))))
            #expect(count == 0)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
        let spans = tracer.memory.finishedSpans
        let call = try #require(spans.first { $0.operationName == "count \(table)" }, "\(spans.map(\.operationName))")
        #expect(call.kind == .client && call.parentSpanID == nil, "the app's call is the root here")
        #expect(Self.string(call.attributes, "db.namespace")?.hasSuffix("|\(configuration.schemaName)") == true)
        #expect(Self.string(call.attributes, "db.operation.name") == "count")
        #expect(Self.string(call.attributes, "db.collection.name") == table)
        let statements = spans.filter { $0.parentSpanID == call.spanID }
        #expect(statements.contains { Self.string($0.attributes, "db.query.text")?.contains("$1") == true }, "\(statements.map(\.attributes))")
        for span in spans {
            span.attributes.forEach { key, attribute in
                #expect(!"\(attribute)".contains(secret), "\(span.operationName) \(key)")
            }
        }
    }

    @Test("a failed call's span names the error's code; a malformed or oversized traceparent never fails the server")
    func failuresAndHostileTraceFields() async throws {
        let tracer = W3CInMemoryTracer()
        let user = try await ServerTestHarness.makeUser("tracebad")
        try await ServerTestHarness.withServer(configure: { $0.tracer = tracer }) { port in
            let store = try RemoteModelStore(url: try ServerRemoteStoreTests.url(user, port: port), tracer: tracer)
            defer { Task { await store.close() } }
            let missing = ServerTestHarness.uniqueEntity("Missing")
            let error = await #expect(throws: PGModelError.self) { try await store.count(FetchRequest(entity: missing)) }
            #expect(error?.requestID != nil, "the error answer names its request")
            let failed = tracer.memory.finishedSpans.filter { $0.kind == .server && Self.string($0.attributes, "error.type") != nil }
            #expect(failed.first?.status?.code == .error)

            let raw = try await RawProtocolClient.connect(port: port)
            defer { Task { await raw.close() } }
            #expect(try await RawProtocolTests.hello(raw, user.name, "secret").ok == true)
            // Not W3C: ignored, the request runs as the root of a new trace.
            try await raw.sendLine(#"{"id":2,"op":"ping","traceparent":"garbage\u0000-\u2028"}"#)
            #expect(try RawResponse(try await raw.readLine()).ok == true)
            try await raw.sendLine(#"{"id":3,"op":"count","entity":"\#(missing)","traceparent":"00-zz-yy-01","tracestate":"a=b"}"#)
            #expect(try RawResponse(try await raw.readLine()).code != "invalid_field")
            // Past the bound, or not a string: refused with a typed error, and the connection goes on.
            let long = String(repeating: "0", count: WireProtocol.maxTraceParentBytes + 1)
            try await raw.sendLine(#"{"id":4,"op":"ping","traceparent":"\#(long)"}"#)
            let refused = try RawResponse(try await raw.readLine())
            #expect(refused.code == "invalid_field" && refused.field == "traceparent", "\(refused.text)")
            #expect(refused.error?["requestID"] as? String != nil, "\(refused.text)")
            try await raw.sendLine(#"{"id":5,"op":"count","entity":"X","tracestate":{"a":1}}"#)
            #expect(try RawResponse(try await raw.readLine()).field == "tracestate")
            try await raw.sendLine(#"{"id":6,"op":"ping"}"#)
            #expect(try RawResponse(try await raw.readLine()).ok == true)
        }
    }

    @Test("every request is one log line with its request id, user, op, code and duration; error answers carry the id")
    func requestLinesAndIDs() async throws {
        let user = try await ServerTestHarness.makeUser("logline")
        let capture = LogCapture()
        let logger = Logger(label: "pgmodel.capture") { _ in capture }
        let missing = ServerTestHarness.uniqueEntity("Absent")
        let ids = try await ServerTestHarness.withRunningServer(logger: logger) { _, port in
            let store = try RemoteModelStore(url: try ServerRemoteStoreTests.url(user, port: port))
            defer { Task { await store.close() } }
            var ids: [String] = []
            for _ in 0..<2 {
                do {
                    _ = try await store.fetch(FetchRequest(entity: missing))
                } catch let error as PGModelError {
                    ids.append(try #require(error.requestID))
                }
            }
            return ids
        }
        #expect(ids.count == 2 && ids[0] != ids[1], "\(ids)")
        let text = capture.text
        for id in ids {
            let line = try #require(text.split(separator: "\n").first { $0.contains("request_id=\(id)") }, "\(text)")
            #expect(line.hasPrefix("info request"), "\(line)")
            #expect(line.contains("user=\(user.name)") && line.contains("op=fetch") && line.contains("ms="), "\(line)")
            #expect(!line.contains("code=ok"), "\(line)")
        }
    }

    static func string(_ attributes: SpanAttributes, _ key: String) -> String? {
        guard case .string(let value)? = attributes.get(key) else { return nil }
        return value
    }

    static func int(_ attributes: SpanAttributes, _ key: String) -> Int64? {
        guard case .int64(let value)? = attributes.get(key) else { return nil }
        return value
    }
}
