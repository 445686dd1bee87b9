import InMemoryTracing
import Instrumentation
import NIOConcurrencyHelpers
import Tracing

/// An `InMemoryTracer` that propagates its span context as W3C Trace Context (`traceparent`), as an
/// OpenTelemetry tracer does: `InMemoryTracer` itself injects keys of its own, which the line protocol
/// has no field for. Ids are hex of W3C's lengths (32 and 16 digits). One per test, handed to the server
/// and the client through their configuration, so tests running side by side never share spans.
struct W3CInMemoryTracer: Tracer {
    let memory: InMemoryTracer

    init() {
        let counter = LockedCounter()
        memory = InMemoryTracer(idGenerator: .init(
            nextTraceID: { Self.hex(counter.next(), digits: 32) },
            nextSpanID: { Self.hex(counter.next(), digits: 16) }))
    }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> InMemorySpan {
        memory.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Carrier == Inject.Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Carrier == Extract.Carrier {
        // A value that is not version 00's four fields is ignored, as W3C Trace Context asks.
        guard let value = extractor.extract(key: "traceparent", from: carrier) else { return }
        let fields = value.split(separator: "-", omittingEmptySubsequences: false)
        guard fields.count == 4, fields[0] == "00", fields[1].count == 32, fields[2].count == 16, fields[3].count == 2,
              fields.allSatisfy({ $0.allSatisfy(\.isHexDigit) }) else { return }
        context.inMemorySpanContext = InMemorySpanContext(traceID: String(fields[1]), spanID: String(fields[2]), parentSpanID: nil)
    }

    private static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}

/// Ids for ``W3CInMemoryTracer``, never zero (W3C's invalid id).
private final class LockedCounter: Sendable {
    private let value = NIOLockedValueBox<UInt64>(0)
    func next() -> UInt64 {
        value.withLockedValue { value in
            value += 1
            return value
        }
    }
}
