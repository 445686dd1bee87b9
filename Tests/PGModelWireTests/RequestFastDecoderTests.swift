import Foundation
@_spi(PGModelInternals) import PGModelCore
import Testing

@_spi(PGModelInternals) @testable import PGModelWire

/// The hand-written reader of common requests must never disagree with the general decoder:
/// where it answers, its request is the general decoder's; where in doubt, it declines.
@Suite("Request fast decoder")
struct RequestFastDecoderTests {
    /// A small deterministic generator, so a failure names a reproducible case.
    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
    }

    static let names = ["title", "rank", "owner.name", "ünïcode", "a b", "x\u{1F600}", "id", "line\u{2028}sep", "del\u{7F}", "a/b"]

    static func value(_ g: inout Generator) -> PGValue {
        switch g.next(9) {
        case 0: return .null
        case 1: return .bool(g.next(2) == 0)
        case 2: return .int(Int64(g.next(2_000_000)) - 1_000_000)
        case 3: return .int([Int64.min, Int64.max, 0][g.next(3)])
        case 4: return .string(names[g.next(names.count)])
        case 5: return .uuid(UUID())
        case 6: return .date(Date(timeIntervalSince1970: Double(g.next(2_000_000_000)) + 0.125))
        case 7: return .string("with \"quote\" and \\ and \n")   // escapes: declined
        default: return .double(Double(g.next(1000)) / 8)       // tagged double: declined
        }
    }

    static func expression(_ g: inout Generator, depth: Int = 0) -> QueryExpression {
        let choice = depth > 3 ? g.next(2) : g.next(7)
        switch choice {
        case 0: return .compare([.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual][g.next(6)],
                                .key(names[g.next(names.count)]), .value(value(&g)))
        case 1: return .compare(.equal, .value(value(&g)), .key(names[g.next(names.count)]))
        case 2: return .and((0..<g.next(4)).map { _ in expression(&g, depth: depth + 1) })
        case 3: return .or((0..<(1 + g.next(3))).map { _ in expression(&g, depth: depth + 1) })
        case 4: return .not(expression(&g, depth: depth + 1))
        case 5: return .string(.contains, .key("title"), .value(.string("x")))   // declined
        default: return .in(.key("rank"), [.int(1), .int(2)])                     // declined
        }
    }

    static func request(_ g: inout Generator, id: Int) -> Request {
        var fetch = FetchRequest(entity: ["Trip", "Ünïcode", "a.b"][g.next(3)])
        if g.next(3) > 0 { fetch.predicate = expression(&g) }
        if g.next(2) == 0 {
            fetch.sort = (0..<(1 + g.next(3))).map { _ in SortKey(names[g.next(names.count)], ascending: g.next(2) == 0) }
        }
        if g.next(6) == 0 { fetch.sort.append(SortKey("location.latitude", field: .double)) }   // declined
        if g.next(2) == 0 { fetch.limit = g.next(3) == 0 ? 1 << 40 : g.next(1000) }
        if g.next(3) == 0 { fetch.offset = g.next(100) }
        if g.next(4) == 0 { fetch.properties = (0..<g.next(3)).map { names[$0] } }
        if g.next(8) == 0 { fetch.identifiers = [UUID()] }                                       // declined
        let requestID: RequestID = g.next(4) == 0 ? .string("req-\(id)") : .int(Int64(id) - 50)
        let timeout: Duration? = g.next(3) == 0 ? .milliseconds(1 + g.next(86_400_000)) : nil
        var request: Request
        switch g.next(5) {
        case 0: request = Request(id: requestID, operation: .fetch(fetch), timeout: timeout)
        case 1: request = Request(id: requestID, operation: .count(fetch), timeout: timeout)
        case 2: request = Request(id: requestID, operation: .ids(fetch), timeout: timeout)
        case 3: request = Request(id: requestID, operation: .ping, timeout: timeout)
        default: request = Request(id: requestID, operation: .fetchTable(fetch), timeout: timeout)
        }
        if g.next(3) == 0 {
            request.traceParent = "00-\(String(repeating: "ab", count: 16))-\(String(repeating: "0\(g.next(10))", count: 8))-01"
            if g.next(2) == 0 { request.traceState = ["vendor=opaque", "a=1,b=2/3", "x=\"quoted\""][g.next(3)] }   // an escape: declined
        }
        return request
    }

    @Test func whereTheFastReaderAnswersItAgreesWithTheGeneralDecoder() throws {
        var g = Generator(state: 15)
        var answered = 0
        for id in 0..<3000 {
            let request = Self.request(&g, id: id)
            let line = try request.encodedLine().dropLast()
            let general = Request.decodeInGeneral(line: Data(line))
            #expect(try general.get() == request, "the general decoder round-trips \(request)")
            guard let fast = RequestFastDecoder.decode(Data(line)) else { continue }
            answered += 1
            #expect(fast == request, "\(String(decoding: line, as: UTF8.self))")
        }
        // Most generated requests are in the fast reader's subset: it is really used.
        #expect(answered > 1000, "answered \(answered)")
    }

    @Test func whereTheFastWriterAnswersItWritesJSONEncodersBytes() throws {
        var g = Generator(state: 16)
        var answered = 0
        for id in 0..<3000 {
            let request = Self.request(&g, id: id)
            let general = try WireJSON.sharedEncoder.encode(request)
            guard let fast = RequestFastEncoder.encode(request) else { continue }
            answered += 1
            #expect(fast == general, "\(String(decoding: fast, as: UTF8.self)) != \(String(decoding: general, as: UTF8.self))")
            #expect(RequestFastDecoder.decode(fast) == request)
        }
        #expect(answered > 1000, "answered \(answered)")
        #expect(try Request(id: 3, operation: .ping).encodedLine() == Data(#"{"id":3,"op":"ping"}"#.utf8 + [0x0A]))
    }

    @Test func theCommonShapesAreReadByHand() {
        let lines = [
            #"{"id":1,"op":"ping"}"#,
            #" { "op" : "fetch" , "id" : "a" , "format":"table", "entity":"Trip", "where":{"eq":[{"key":"rank"},{"value":7}]} } "#,
            #"{"id":2,"op":"count","entity":"Trip","where":{"and":[{"ge":[{"key":"rank"},{"value":-3}]},{"not":{"eq":[{"key":"name"},{"value":null}]}}]}}"#,
            #"{"id":3,"op":"ids","entity":"Trip","sort":[{"key":"rank","order":"reverse"},{"key":"id"}],"limit":10,"offset":0}"#,
            #"{"id":4,"op":"fetch","entity":"Trip","where":{"eq":[{"key":"id"},{"value":{"uuid":"0193a1b2-0000-7000-8000-000000000001"}}]}}"#,
            #"{"id":5,"op":"fetch","entity":"Trip","where":{"lt":[{"key":"start"},{"value":{"date":"2024-05-01T10:00:00.000Z"}}]},"properties":["name"]}"#,
            #"{"id":6,"op":"ping","timeoutMs":5000}"#,
            #"{"id":7,"op":"count","entity":"Trip","timeoutMs":1}"#,
            #"{"id":8,"op":"ping","traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}"#,
            #"{"id":9,"op":"fetch","entity":"Trip","timeoutMs":9,"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"rojo=00f067aa0ba902b7"}"#,
        ]
        for line in lines {
            let data = Data(line.utf8)
            let fast = RequestFastDecoder.decode(data)
            #expect(fast != nil, "\(line)")
            #expect(fast == (try? Request.decodeInGeneral(line: data).get()), "\(line)")
        }
    }

    @Test func doubtfulLinesAreLeftToTheGeneralDecoder() {
        let lines = [
            #"{"id":1,"op":"ping","id":2}"#,                                   // a repeated key
            #"{"id":1,"op":"fetch","entity":"T\u00e9"}"#,                      // an escape
            #"{"id":1,"op":"fetch","entity":"T","limit":-1}"#,                 // an error to report
            #"{"id":1,"op":"fetch","entity":"T","limit":1.0}"#,                // not an integer literal
            #"{"id":1,"op":"fetch","entity":"T","limit":1e2}"#,
            #"{"id":01,"op":"ping"}"#,                                         // not JSON
            #"{"id":99999999999999999999,"op":"ping"}"#,                       // beyond Int64
            #"{"id":1,"op":"count","entity":"T","format":"table"}"#,           // format belongs to fetch
            #"{"id":1,"op":"fetch","entity":"T","extra":true}"#,               // an unknown key
            #"{"id":1,"op":"ping","entity":"T"}"#,
            #"{"id":1,"op":"fetch","entity":"T","where":{"eq":[{"key":"a"}]}}"#,  // one operand
            #"{"id":1,"op":"fetch","entity":"T","where":{"key":"a","value":1}}"#,
            #"{"id":1,"op":"fetch","entity":"T","sort":[{"key":"a","as":"double"}]}"#,
            #"{"id":1,"op":"fetch","entity":"T","sort":[{"key":"a","order":"sideways"}]}"#,
            #"{"id":1,"op":"fetch","entity":"T","where":{"eq":[{"key":"a"},{"value":{"uuid":"nope"}}]}}"#,
            #"{"id":1,"op":"fetch","entity":"T"} x"#,                          // trailing bytes
            #"{"id":1,"op":"save"}"#,                                          // not a fast op
            #"{"id":1,"op":"fetch","entity":"T","limit":9223372036854775807}"#,   // range checked as a double
            #"{"id":1,"op":"ping","timeoutMs":0}"#,                            // errors to report
            #"{"id":1,"op":"ping","timeoutMs":86400001}"#,
            #"{"id":1,"op":"ping","timeoutMs":1.5}"#,
            #"{"id":1,"op":"ping","traceparent":null}"#,                       // null, the wrong type, too long
            #"{"id":1,"op":"ping","traceparent":7}"#,
            "{\"id\":1,\"op\":\"ping\",\"traceparent\":\"\(String(repeating: "0", count: 129))\"}",
            "{\"id\":1,\"op\":\"ping\",\"tracestate\":\"\(String(repeating: "a", count: 513))\"}",
            #"{}"#, #"[]"#, #""#, #"{"id":1"#,
        ]
        for line in lines {
            #expect(RequestFastDecoder.decode(Data(line.utf8)) == nil, "\(line)")
        }
        var invalidUTF8 = Data(#"{"id":1,"op":"fetch","entity":""#.utf8)
        invalidUTF8.append(contentsOf: [0xC3, 0x28])
        invalidUTF8.append(contentsOf: Data(#""}"#.utf8))
        #expect(RequestFastDecoder.decode(invalidUTF8) == nil)
        // Through the public entry point, the general decoder's errors are unchanged.
        guard case .failure(let failure) = Request.decode(line: Data(#"{"id":1,"op":"fetch","entity":"T","limit":-1}"#.utf8)) else {
            Issue.record("a negative limit decoded")
            return
        }
        #expect(failure.error.code == .invalidField)
        #expect(failure.error.field == "limit")
    }

    @Test func traceFieldsAreBoundedStringsOrAbsent() throws {
        let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        let decoded = try Request.decode(line: Data(#"{"id":1,"op":"ping","traceparent":"\#(parent)","tracestate":"a=b"}"#.utf8)).get()
        #expect(decoded.traceParent == parent && decoded.traceState == "a=b")
        #expect(try Request.decode(line: Data(#"{"id":1,"op":"ping","traceparent":null}"#.utf8)).get().traceParent == nil)
        // The content is the tracer's to judge: the wire takes any string within the bound.
        #expect(try Request.decode(line: Data(#"{"id":1,"op":"ping","traceparent":"not-w3c"}"#.utf8)).get().traceParent == "not-w3c")
        let refusals = [
            (#"{"id":1,"op":"ping","traceparent":7}"#, "traceparent"),
            (#"{"id":1,"op":"ping","tracestate":["a"]}"#, "tracestate"),
            ("{\"id\":1,\"op\":\"ping\",\"traceparent\":\"\(String(repeating: "0", count: WireProtocol.maxTraceParentBytes + 1))\"}", "traceparent"),
            ("{\"id\":1,\"op\":\"ping\",\"tracestate\":\"\(String(repeating: "a", count: WireProtocol.maxTraceStateBytes + 1))\"}", "tracestate"),
        ]
        for (line, field) in refusals {
            guard case .failure(let failure) = Request.decode(line: Data(line.utf8)) else {
                Issue.record("decoded: \(line.prefix(80))")
                continue
            }
            #expect(failure.error.code == .invalidField && failure.error.field == field, "\(failure.error)")
            #expect(failure.id == .int(1), "the answer keeps the request's id")
        }
        // A save carries them too, in JSONEncoder's key order.
        var save = Request(id: 2, operation: .save(SaveRequest(deletes: [RowReference(entity: "Trip", id: UUID())])))
        save.traceParent = parent
        #expect(RequestFastEncoder.encode(save) == (try WireJSON.sharedEncoder.encode(save)))
        #expect(RequestFastDecoder.decode(try save.encodedLine().dropLast()) == save)
    }

    @Test func nestingBeyondTheFastReadersDepthIsLeftToTheGeneralDecoder() throws {
        var expression = QueryExpression.compare(.equal, .key("a"), .value(.int(1)))
        for _ in 0..<RequestFastDecoder.maximumDepth { expression = .not(expression) }
        let line = try Request(id: 1, operation: .count(FetchRequest(entity: "T", predicate: expression))).encodedLine().dropLast()
        #expect(RequestFastDecoder.decode(Data(line)) == nil)
        #expect(try Request.decode(line: Data(line)).get() == Request(id: 1, operation: .count(FetchRequest(entity: "T", predicate: expression))))
    }
}
