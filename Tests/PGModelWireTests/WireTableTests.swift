import Foundation
@_spi(PGModelInternals) import PGModelCore
import PGModelTestSupport
import Testing

@_spi(PGModelInternals) @testable import PGModelWire

@Suite("The table form of fetch answers")
struct WireTableTests {
    /// Every kind of value §5 knows, including the awkward ones: escapes, non-ASCII, integral and
    /// huge doubles, dates before 1970 and to the microsecond, the extremes of Int64.
    static let values: [PGValue] = [
        .null, .bool(true), .bool(false), .int(0), .int(-42), .int(Int64.max), .int(Int64.min),
        .double(120.5), .double(3), .double(-0.1), .double(1e20), .double(.leastNonzeroMagnitude), .double(1 / 3),
        .string(""), .string("Paris"), .string("quote \" backslash \\ slash / newline \n tab \t nul \u{0} bell \u{7}"),
        .string("Zürich ✈︎ 東京 🧳"), .decimal(Decimal(string: "12.50") ?? 0), .decimal(Decimal(string: "-0.000001") ?? 0),
        .date(Date(timeIntervalSince1970: 1_714_557_600)), .date(Date(timeIntervalSince1970: 1_714_557_600.250001)),
        .date(Date(timeIntervalSince1970: -86_400 * 365.25 * 30 + 0.5)), .uuid(WireTest.otherID),
        .data(Data([0, 1, 2, 255])), .data(Data()),
    ]

    static var table: FetchedTable {
        let keys = values.indices.map { "k\($0)" }
        return FetchedTable(
            shapes: [.init(entity: "Trip", keys: keys), .init(entity: "BusinessTrip", keys: ["name"]), .init(entity: "Empty", keys: [])],
            rows: [.init(shape: 0, id: WireTest.tripID, values: values),
                   .init(shape: 1, id: WireTest.otherID, values: [.string("Lyon")]),
                   .init(shape: 2, id: WireTest.userID, values: [])])
    }

    @Test("a table survives the hand-written encoder and reader")
    func roundTrip() throws {
        let line = try Response(id: 7, .table(Self.table)).encodedLine()
        #expect(line.last == 0x0A)
        #expect(!line.dropLast().contains(0x0A))
        let response = try #require(WireTable.decodeLine(line.dropLast()))
        #expect(response == Response(id: 7, .table(Self.table)))
        #expect(try ServerMessage.decode(line: line.dropLast()) == .response(response))
    }

    @Test("the hand-written line is the JSON the general coders read and write")
    func agreesWithCodable() throws {
        let response = Response(id: "page-1", .table(Self.table))
        // Hand-written line → JSONDecoder.
        let fast = try response.encodedLine()
        let general = try WireJSON.makeDecoder().decode(Response.self, from: fast)
        #expect(general == response)
        // JSONEncoder's line → hand-written reader.
        let slow = try WireJSON.encodeLine(response)
        #expect(WireTable.decodeLine(slow.dropLast()) == response)
        #expect(String(decoding: fast, as: UTF8.self).hasPrefix(#"{"id":"page-1","ok":true,"table":{"rows":[[0,""#))
    }

    @Test("negative zero keeps its sign through both writers and both readers")
    func negativeZero() throws {
        let table = FetchedTable(shapes: [.init(entity: "Reading", keys: ["value", "other"])],
                                 rows: [.init(shape: 0, id: WireTest.tripID, values: [.double(-0.0), .double(0.0)])])
        let response = Response(id: 1, .table(table))
        func signs(_ decoded: Response?) -> [FloatingPointSign] {
            guard case .success(.table(let table))? = decoded?.result else { return [] }
            return table.rows.flatMap(\.values).compactMap { if case .double(let d) = $0 { d.sign } else { nil } }
        }
        for line in [try response.encodedLine(), try WireJSON.encodeLine(response)] {
            #expect(signs(WireTable.decodeLine(line.dropLast())) == [.minus, .plus])
            #expect(signs(try WireJSON.makeDecoder().decode(Response.self, from: line)) == [.minus, .plus])
        }
    }

    @Test("rows of a related fetch carry via after their values")
    func via() throws {
        let table = FetchedTable(shapes: [.init(entity: "Track", keys: ["album"])],
                                 rows: [.init(shape: 0, id: WireTest.tripID, values: [.uuid(WireTest.otherID)], via: WireTest.otherID)])
        let line = try Response(id: 1, .table(table)).encodedLine()
        let text = String(decoding: line, as: UTF8.self)
        #expect(text.contains(#""via":true"#))
        #expect(text.contains(#"[0,"\#(WireTest.tripID.uuidString.lowercased())",{"uuid":"\#(WireTest.otherID.uuidString.lowercased())"},"\#(WireTest.otherID.uuidString.lowercased())"]"#))
        #expect(WireTable.decodeLine(line.dropLast()) == Response(id: 1, .table(table)))
    }

    @Test("a row that does not match its shape is refused, not indexed past", arguments: [
        #"{"id":1,"ok":true,"table":{"rows":[[0,"0193a7c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d","a","b"]],"shapes":[{"entity":"Trip","keys":["name"]}]}}"#,
        #"{"id":1,"ok":true,"table":{"rows":[[1,"0193a7c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d","a"]],"shapes":[{"entity":"Trip","keys":["name"]}]}}"#,
        #"{"id":1,"ok":true,"table":{"rows":[[0,"not a uuid","a"]],"shapes":[{"entity":"Trip","keys":["name"]}]}}"#,
    ])
    func mismatchedRow(line: String) {
        #expect(WireTable.decodeLine(Data(line.utf8)) == nil)
        #expect(throws: PGModelError.self) { try ServerMessage.decode(line: Data(line.utf8)) }
    }

    @Test("other answers are left to the general decoder")
    func otherLines() throws {
        for response in [Response(id: 1, .count(3)), Response(id: 2, .rows([])), Response(id: nil, error: WireError(.timeout, "late"))] {
            let line = try response.encodedLine()
            #expect(WireTable.decodeLine(line.dropLast()) == nil)
            #expect(try ServerMessage.decode(line: line.dropLast()) == .response(response))
        }
    }

    @Test("fetch asks for a table with format, and a server reads it back")
    func request() throws {
        let request = Request(id: 3, operation: .fetchTable(FetchRequest(entity: "Trip", limit: 2)))
        let line = try request.encodedLine()
        #expect(String(decoding: line, as: UTF8.self).contains(#""format":"table""#))
        #expect(try Request.decode(line: line.dropLast()).get() == request)
        let rows = try Request.decode(line: Data(#"{"id":4,"op":"fetch","entity":"Trip","format":"rows"}"#.utf8)).get()
        #expect(rows.operation == .fetch(FetchRequest(entity: "Trip")))
        guard case .failure(let failure) = Request.decode(line: Data(#"{"id":5,"op":"fetch","entity":"Trip","format":"xml"}"#.utf8)) else {
            Issue.record("an unknown format was accepted")
            return
        }
        #expect(failure.error.code == .invalidField)
        #expect(failure.error.field == "format")
    }

    @Test("dates keep their microseconds and read back as the same Date")
    func dates() throws {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<2000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            // Microseconds within 95 years of 2000, where a Date (a Double) still holds every microsecond.
            let micros = Int64(bitPattern: state >> 1) % 6_000_000_000_000_000 - 3_000_000_000_000_000
            let date = Date(timeInterval: Double(micros) / 1_000_000, since: Date(timeIntervalSince1970: 946_684_800))
            let text = PGValue.formatDate(date)
            let parsed = try #require(PGValue.parseDate(text))
            #expect(parsed == date, "\(text)")
            // The arithmetic formatter writes what the ISO 8601 format style would.
            let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
            #expect(try style.parse(text).timeIntervalSince1970.rounded(.down) == date.timeIntervalSince1970.rounded(.down), "\(text)")
        }
        #expect(PGValue.parseDate("2024-05-01T10:00:00.000417Z").map(PGValue.formatDate) == "2024-05-01T10:00:00.000417Z")
        #expect(PGValue.parseDate("1999-12-31T23:59:59.999999Z").map(PGValue.formatDate) == "1999-12-31T23:59:59.999999Z")
        #expect(PGValue.parseDate("2024-05-01T10:00:00.5Z") == Date(timeIntervalSince1970: 1_714_557_600.5))
    }

    /// A table past ``WireTable/parallelRows`` whose line is past ``JSONReader/parallelRowBytes``: both are
    /// written and read in two halves at once. Its strings hold what could fool a cut between rows that
    /// did not follow strings: brackets, commas, quotes and backslashes, and whole forged rows.
    static func largeTable(rows count: Int = 12_000) -> FetchedTable {
        let forged = #"],[0,"0193a7c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d","forged"],["#
        let awkward = ["plain", forged, "\\", "\\\"],[", "\"", "],", ",[", "{\"a\":[1,2]}", "tab\tnew\nline", "✈︎ ],[ 東京"]
        var table = FetchedTable(shapes: [.init(entity: "Note", keys: ["title", "body", "rank"]), .init(entity: "Tag", keys: ["name"])])
        for n in 0..<count {
            let id = UUID(uuidString: String(format: "0193a7c4-5e6f-7a8b-9c0d-%012x", n)) ?? WireTest.tripID
            if n % 7 == 3 {
                table.rows.append(.init(shape: 1, id: id, values: [.string(awkward[n % awkward.count])]))
            } else {
                table.rows.append(.init(shape: 0, id: id, values: [
                    .string(awkward[n % awkward.count] + " \(n)"), .string(String(repeating: awkward[(n + 3) % awkward.count], count: 1 + n % 5)),
                    n % 11 == 0 ? .null : .int(Int64(n)),
                ]))
            }
        }
        return table
    }

    @Test("a large table is written and read in halves, and reads back exactly")
    func largeTableInHalves() throws {
        let table = Self.largeTable()
        let response = Response(id: 9, .table(table))
        let line = try response.encodedLine()
        #expect(table.rows.count >= WireTable.parallelRows)
        #expect(line.count >= JSONReader.parallelRowBytes)
        #expect(!line.dropLast().contains(0x0A))
        #expect(WireTable.decodeLine(line.dropLast()) == response)
        // The halves joined are the JSON the general decoder reads, and JSONEncoder's line reads the same.
        #expect(try WireJSON.makeDecoder().decode(Response.self, from: line) == response)
        #expect(WireTable.decodeLine(try WireJSON.encodeLine(response).dropLast()) == response)
    }

    @Test("the cut between halves falls between rows, never inside a string")
    func cutBetweenRows() throws {
        let line = try Response(id: 9, .table(Self.largeTable())).encodedLine().dropLast()
        try line.withUnsafeBytes { bytes in
            var reader = JSONReader(bytes)
            let rowsAt = try #require(line.firstRange(of: Data(#""rows":"#.utf8))).upperBound - line.startIndex
            reader.position = rowsAt
            let cut = try #require(try reader.rowSplit())
            #expect(cut > bytes.count / 3)
            // A row ends just before the cut and the next begins just after it, with a shape index.
            #expect(bytes[cut - 1] == UInt8(ascii: "]"))
            #expect(bytes[cut + 1] == UInt8(ascii: "["))
            var next = JSONReader(bytes)
            next.position = cut + 1
            var width = 0
            _ = try next.tableRow(width: &width)
        }
    }

    @Test("a fault in either half refuses the whole line", arguments: [0.25, 0.5, 0.75])
    func faultInAHalf(at fraction: Double) throws {
        var line = try Response(id: 9, .table(Self.largeTable())).encodedLine().dropLast()
        // Turn the first id past that point into one that is not a UUID.
        let from = line.startIndex + Int(Double(line.count) * fraction)
        let marker = try #require(line[from...].firstRange(of: Data(#","0193a7c4-"#.utf8)))
        line[marker.lowerBound + 2] = UInt8(ascii: "x")
        #expect(WireTable.decodeLine(Data(line)) == nil)
        #expect(throws: PGModelError.self) { try ServerMessage.decode(line: Data(line)) }
    }

    @Test("a large table with via keeps it in both halves")
    func largeTableWithVia() throws {
        var table = Self.largeTable()
        for n in table.rows.indices where n % 2 == 0 { table.rows[n].via = WireTest.otherID }
        let response = Response(id: 10, .table(table))
        #expect(WireTable.decodeLine(try response.encodedLine().dropLast()) == response)
    }
}
