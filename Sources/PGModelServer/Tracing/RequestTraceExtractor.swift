@_spi(PGModelInternals) import PGModelWire
import Tracing

/// Reads a request's W3C Trace Context fields (`traceparent`, `tracestate`) for the tracer's `extract`:
/// the carrier is the decoded request, whose fields the wire already bounded in length. A tracer that
/// cannot read them starts a new trace; nothing here fails.
///
/// ```swift
/// var context = ServiceContext.topLevel
/// tracer.extract(request, into: &context, using: RequestTraceExtractor())
/// ```
struct RequestTraceExtractor: Extractor {
    func extract(key: String, from carrier: Request) -> String? {
        switch key {
        case "traceparent": carrier.traceParent
        case "tracestate": carrier.traceState
        default: nil
        }
    }
}
