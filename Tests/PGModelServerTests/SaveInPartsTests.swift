import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelServer
import Testing

@_spi(PGModelInternals) @testable import PGModelWire

/// A save in parts (PROTOCOL.md §4): the server's ``SaveAssembly``, the parts' wire form, and the client's
/// ``SaveParts``, all without sockets.
@Suite("Saves in parts")
struct SaveInPartsTests {
    static func row(_ n: Int, note: String = "") -> RowValues {
        RowValues(entity: "Trip", id: UUID.v7(), values: ["name": .string("trip \(n)"), "note": .string(note), "rank": .int(Int64(n))])
    }

    static func save(_ range: Range<Int>, author: String? = nil) -> SaveRequest {
        SaveRequest(inserts: range.map { row($0) }, author: author)
    }

    /// A budget that lends up to `limit` bytes and remembers what it lent.
    final class Budget: @unchecked Sendable {
        var limit: Int
        var lent = 0
        init(limit: Int = .max) { self.limit = limit }
        func reserve(_ bytes: Int) -> Bool {
            guard lent + bytes <= limit else { return false }
            lent += bytes
            return true
        }
    }

    // MARK: SaveAssembly

    @Test("parts in order are held, and the last runs the parts joined in order, the first author counting")
    func partsInOrder() {
        var assembly = SaveAssembly(maxSaveBytes: 10_000)
        let budget = Budget()
        let parts = [Self.save(0..<2, author: "importer"), Self.save(2..<4, author: "other"), Self.save(4..<5)]
        #expect(assembly.receive(parts[0], part: SavePart(index: 0, count: 3), bytes: 100, reserve: budget.reserve) == .held(1))
        #expect(assembly.receive(parts[1], part: SavePart(index: 1, count: 3), bytes: 120, reserve: budget.reserve) == .held(2))
        let held = SaveAssembly.memory(of: parts[0], bytes: 100) + SaveAssembly.memory(of: parts[1], bytes: 120)
        #expect(budget.lent == held)
        #expect(assembly.heldBytes == held)
        guard case .run(let whole, let releasing) = assembly.receive(parts[2], part: SavePart(index: 2, count: 3), bytes: 50, reserve: budget.reserve) else {
            Issue.record("the last part did not run the save")
            return
        }
        #expect(whole.inserts == parts.flatMap(\.inserts))
        #expect(whole.author == "importer")
        #expect(releasing == held)
        #expect(assembly.heldBytes == 0)
    }

    @Test("every list of a save is joined, in part order")
    func everyListIsJoined() {
        let id = UUID.v7()
        let first = SaveRequest(updates: [Self.row(1)], deletes: [RowReference(entity: "Trip", id: id)],
                                links: [LinkChange(entity: "Trip", relationship: "tags", source: id, destination: id, isAdded: true)])
        let second = SaveRequest(inserts: [Self.row(2)], batchDeletes: [FetchRequest(entity: "Trip")],
                                 shares: [ShareChange(record: RowReference(entity: "Trip", id: id), user: "bob", permission: .readOnly)], author: "late")
        var assembly = SaveAssembly(maxSaveBytes: 10_000)
        _ = assembly.receive(first, part: SavePart(index: 0, count: 2), bytes: 10) { _ in true }
        let action = assembly.receive(second, part: SavePart(index: 1, count: 2), bytes: 10) { _ in true }
        var expected = first
        expected.inserts = second.inserts
        expected.batchDeletes = second.batchDeletes
        expected.shares = second.shares
        expected.author = "late"
        #expect(action == .run(expected, releasing: SaveAssembly.memory(of: first, bytes: 10)))
    }

    @Test("a part out of order, or with another count, drops the save, and its later parts are refused too")
    func outOfOrder() {
        var assembly = SaveAssembly(maxSaveBytes: 10_000)
        let first = Self.save(0..<1)
        let held = SaveAssembly.memory(of: first, bytes: 100)
        _ = assembly.receive(first, part: SavePart(index: 0, count: 3), bytes: 100) { _ in true }
        guard case .refuse(let skipped, let released) = assembly.receive(Self.save(1..<2), part: SavePart(index: 2, count: 3), bytes: 100, reserve: { _ in true }) else {
            Issue.record("a skipped part was not refused")
            return
        }
        #expect(skipped.code == .invalidField)
        #expect(skipped.field == "part")
        #expect(released == held)
        guard case .refuse(let late, let none) = assembly.receive(Self.save(2..<3), part: SavePart(index: 1, count: 3), bytes: 100, reserve: { _ in true }) else {
            Issue.record("a part of a dropped save was not refused")
            return
        }
        #expect(late.field == "part")
        #expect(none == 0)
        // Even the last part of the dropped save runs nothing.
        guard case .refuse = assembly.receive(Self.save(2..<3), part: SavePart(index: 2, count: 3), bytes: 100, reserve: { _ in true }) else {
            Issue.record("the last part of a dropped save ran")
            return
        }

        _ = assembly.receive(first, part: SavePart(index: 0, count: 3), bytes: 100) { _ in true }
        guard case .refuse(let count, let releasedAgain) = assembly.receive(Self.save(1..<2), part: SavePart(index: 1, count: 4), bytes: 100, reserve: { _ in true }) else {
            Issue.record("a part with another count was not refused")
            return
        }
        #expect(count.field == "parts")
        #expect(releasedAgain == held)
        #expect(assembly.heldBytes == 0)
    }

    @Test("a part 0 while a save is open refuses it and drops the open one, so two interleaved saves never splice; one part of one runs at once")
    func partZeroWhileOpen() {
        var assembly = SaveAssembly(maxSaveBytes: 10_000)
        let a0 = Self.save(0..<1), b0 = Self.save(1..<2), a1 = Self.save(2..<3), b1 = Self.save(3..<4)
        #expect(assembly.receive(a0, part: SavePart(index: 0, count: 2), bytes: 300) { _ in true } == .held(1))
        guard case .refuse(let error, let released) = assembly.receive(b0, part: SavePart(index: 0, count: 2), bytes: 40, reserve: { _ in true }) else {
            Issue.record("a second save's part 0 was accepted while the first was open")
            return
        }
        #expect(error.code == .invalidField)
        #expect(error.field == "part")
        #expect(released == SaveAssembly.memory(of: a0, bytes: 300))
        #expect(!assembly.isHolding)
        // Neither save's later part can run: nothing of either commits.
        for later in [a1, b1] {
            guard case .refuse(let stray, let none) = assembly.receive(later, part: SavePart(index: 1, count: 2), bytes: 40, reserve: { _ in true }) else {
                Issue.record("a later part of an interleaved save ran")
                return
            }
            #expect(stray.field == "part")
            #expect(none == 0)
        }
        let single = Self.save(5..<6)
        #expect(assembly.receive(single, part: SavePart(index: 0, count: 1), bytes: 20) { _ in true } == .run(single, releasing: 0))
        #expect(assembly.drop() == 0)
    }

    @Test("a held part is reserved at its decoded size when that passes its line: rows whose names change order each carry their own keys")
    func reservesDecodedSize() {
        // Two name orders alternating: no row shares its keys with the one before.
        let orders = [RowKeys(["ab", "cd", "ef"]), RowKeys(["cd", "ab", "ef"])]
        let rows = (0..<1_000).map { i in
            RowValues(entity: "T", id: UUID.v7(), keys: orders[i % 2], values: [.int(0), .int(0), .int(0)])
        }
        let crafted = SaveRequest(inserts: rows)
        // Each row's line: {"entity":"T","id":"…36…","values":{"ab":0,"cd":0,"ef":0}}, = 71 bytes.
        let line = 71 * rows.count
        let memory = SaveAssembly.memory(of: crafted, bytes: line)
        #expect(memory > line)
        #expect(memory >= rows.count * (MemoryLayout<RowValues>.stride + 3 * MemoryLayout<PGValue>.stride))
        let budget = Budget()
        var assembly = SaveAssembly(maxSaveBytes: 1 << 20)
        #expect(assembly.receive(crafted, part: SavePart(index: 0, count: 2), bytes: line, reserve: budget.reserve) == .held(1))
        #expect(budget.lent == memory)
        #expect(assembly.heldBytes == memory)
        // The same rows as separate key objects count their keys each time; shared ones once.
        let shared = SaveRequest(inserts: rows.map { RowValues(entity: "T", id: $0.id, keys: orders[0], values: [.int(0), .int(0), .int(0)]) })
        let separate = SaveRequest(inserts: rows.map { RowValues(entity: "T", id: $0.id, keys: RowKeys(["ab", "cd", "ef"]), values: [.int(0), .int(0), .int(0)]) })
        #expect(separate.approximateMemoryBytes > shared.approximateMemoryBytes + (rows.count - 1) * 100)
        // A part with a batch delete counts its line eightfold: a predicate tree is larger decoded.
        let delete = SaveRequest(batchDeletes: [FetchRequest(entity: "T")])
        #expect(SaveAssembly.memory(of: delete, bytes: 10_000) == 80_000)
    }

    @Test("parts past the save's limit, or past what the server holds, are refused with save_too_large and drop the save")
    func limits() {
        var assembly = SaveAssembly(maxSaveBytes: 250)
        let parts = [Self.save(0..<1), Self.save(1..<2)]
        _ = assembly.receive(parts[0], part: SavePart(index: 0, count: 3), bytes: 100) { _ in true }
        _ = assembly.receive(parts[1], part: SavePart(index: 1, count: 3), bytes: 100) { _ in true }
        guard case .refuse(let tooLarge, let released) = assembly.receive(Self.save(2..<3), part: SavePart(index: 2, count: 3), bytes: 51, reserve: { _ in true }) else {
            Issue.record("a last part past the save's limit ran")
            return
        }
        #expect(tooLarge.code == .saveTooLarge)
        #expect(released == SaveAssembly.memory(of: parts[0], bytes: 100) + SaveAssembly.memory(of: parts[1], bytes: 100))
        #expect(assembly.heldBytes == 0)

        guard case .refuse(let first, _) = assembly.receive(Self.save(0..<1), part: SavePart(index: 0, count: 2), bytes: 251, reserve: { _ in true }) else {
            Issue.record("a first part past the save's limit was held")
            return
        }
        #expect(first.code == .saveTooLarge)

        let one = SaveAssembly.memory(of: parts[0], bytes: 100)
        let budget = Budget(limit: one + one / 2)
        #expect(assembly.receive(parts[0], part: SavePart(index: 0, count: 3), bytes: 100, reserve: budget.reserve) == .held(1))
        guard case .refuse(let full, let releasedFull) = assembly.receive(Self.save(1..<2), part: SavePart(index: 1, count: 3), bytes: 100, reserve: budget.reserve) else {
            Issue.record("a part past the server's budget was held")
            return
        }
        #expect(full.code == .saveTooLarge)
        #expect(releasedFull == one)
        #expect(budget.lent == one)   // the refused part was never lent anything
    }

    @Test("a part with no save open is refused without releasing anything")
    func noSaveOpen() {
        var assembly = SaveAssembly(maxSaveBytes: 1_000)
        guard case .refuse(let error, let released) = assembly.receive(Self.save(0..<1), part: SavePart(index: 1, count: 2), bytes: 10, reserve: { _ in true }) else {
            Issue.record("a stray part was not refused")
            return
        }
        #expect(error.code == .invalidField)
        #expect(error.field == "part")
        #expect(released == 0)
    }

    // MARK: Wire form

    @Test("part and parts round-trip through both encoders and both decoders, in sorted key order")
    func wireForm() throws {
        let request = Request(id: 8, operation: .save(Self.save(0..<2, author: "a")), timeout: .seconds(5), part: SavePart(index: 1, count: 3))
        let fast = try #require(RequestFastEncoder.encode(request))
        let general = try WireJSON.encodeLine(request)
        #expect(fast + Data([0x0A]) == general)
        let text = String(decoding: fast, as: UTF8.self)
        #expect(text.contains(#""op":"save","part":1,"parts":3,"timeoutMs":5000"#))
        #expect(try Request.decode(line: fast).get() == request)
        #expect(try Request.decodeInGeneral(line: fast).get() == request)

        // With a link the fast encoder declines, and JSONEncoder writes the same fields.
        var linked = request
        linked.operation = .save(SaveRequest(links: [LinkChange(entity: "Trip", relationship: "tags", source: UUID.v7(), destination: UUID.v7(), isAdded: true)]))
        #expect(try Request.decode(line: try linked.encodedLine().dropLast()).get() == linked)
    }

    @Test("part and parts are both or neither, in range, whole numbers; other ops ignore them")
    func invalidParts() throws {
        let cases: [(String, String)] = [
            (#""part":-1,"parts":2"#, "part"), (#""part":2,"parts":2"#, "part"), (#""part":"0","parts":2"#, "part"),
            (#""part":0,"parts":0"#, "parts"), (#""part":0,"parts":65537"#, "parts"), (#""part":0,"parts":1.5"#, "parts"),
            (#""part":0"#, "parts"), (#""parts":2"#, "part"),
        ]
        for (fields, field) in cases {
            let line = Data(#"{"id":1,"op":"save","inserts":[],\#(fields)}"#.utf8)
            guard case .failure(let failure) = Request.decode(line: line) else {
                Issue.record("accepted \(fields)")
                continue
            }
            #expect(failure.error.code == .invalidField, "\(fields)")
            #expect(failure.error.field == field, "\(fields)")
            #expect(failure.id == .int(1))
        }
        let fetch = Request.decode(line: Data(#"{"id":2,"op":"count","entity":"Trip","part":0,"parts":2}"#.utf8))
        #expect(try fetch.get() == Request(id: 2, operation: .count(FetchRequest(entity: "Trip"))))
        let most = Request.decode(line: Data(#"{"id":3,"op":"save","part":65535,"parts":65536}"#.utf8))
        #expect(try most.get().part == SavePart(index: 65_535, count: 65_536))
    }

    @Test("held answers and hello's limits round-trip")
    func answers() throws {
        let held = Response(id: 4, .held(2))
        #expect(String(decoding: try held.encodedLine(), as: UTF8.self) == "{\"held\":2,\"id\":4,\"ok\":true}\n")
        #expect(try WireJSON.sharedDecoder.decode(Response.self, from: try held.encodedLine()) == held)
        #expect(ResponseResult.held(2).answers(.save))
        let hello = Response(id: 1, .hello(HelloResult(user: "alice", userID: UUID.v7(), maxLineBytes: 1 << 20, maxSaveBytes: 64 << 20)))
        #expect(try WireJSON.sharedDecoder.decode(Response.self, from: try hello.encodedLine()) == hello)
        let older = try WireJSON.sharedDecoder.decode(Response.self, from: Data(#"{"id":1,"ok":true,"server":"pgmodel/0.1","user":"a","userID":"0193a7c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d"}"#.utf8))
        guard case .success(.hello(let result)) = older.result else {
            Issue.record("an older hello was not read")
            return
        }
        #expect(result.maxLineBytes == nil)
        #expect(result.maxSaveBytes == nil)
    }

    // MARK: SaveParts

    func lines(_ save: SaveRequest, maxLineBytes: Int, maxSaveBytes: Int? = 1 << 30) throws -> [SaveParts.Line] {
        var next: Int64 = 0
        return try SaveParts.lines(for: save, timeout: .seconds(30), maxLineBytes: maxLineBytes, maxSaveBytes: maxSaveBytes) {
            next += 1
            return .int(next)
        }
    }

    @Test("limits from a server's hello that would overflow the client's arithmetic are clamped, not trapped on")
    func hostileHelloLimits() throws {
        let save = Self.save(0..<600)
        for (line, whole) in [(Int.max, Int.max), (Int.max / 2 + 1, Int?.none), (Int.max, 1 << 62)] {
            let cut = try lines(save, maxLineBytes: line, maxSaveBytes: whole)
            #expect(cut.count == 1)
            #expect(cut.allSatisfy { $0.bytes.last == 0x0A })
        }
        // Limits below any row: a typed error, nothing sent.
        for (line, whole) in [(Int.min, Int.min), (0, 0)] {
            let error = #expect(throws: PGModelError.self) { try lines(save, maxLineBytes: line, maxSaveBytes: whole) }
            #expect(error?.code == .lineTooLong)
        }
    }

    @Test("a save that fits is one line; a longer one is parts that each fit, and join back into the save")
    func splitting() throws {
        let small = Self.save(0..<3, author: "me")
        let one = try lines(small, maxLineBytes: 1 << 20)
        #expect(one.count == 1)
        #expect(try Request.decode(line: one[0].bytes.dropLast()).get().part == nil)

        // Rows of very different lengths, so even cuts overflow and get cut again.
        let rows = (0..<300).map { Self.row($0, note: String(repeating: "x", count: $0 % 7 == 0 ? 1_500 : 20)) }
        let id = UUID.v7()
        let save = SaveRequest(inserts: rows, updates: [Self.row(1_000)], deletes: [RowReference(entity: "Trip", id: id)],
                               links: [LinkChange(entity: "Trip", relationship: "tags", source: id, destination: id, isAdded: false)],
                               author: "importer")
        let parts = try lines(save, maxLineBytes: 4_096)
        #expect(parts.count > 5)
        var assembly = SaveAssembly(maxSaveBytes: 1 << 30)
        var ran: SaveRequest?
        for (index, line) in parts.enumerated() {
            #expect(line.bytes.count - 1 <= 4_096)
            #expect(line.bytes.last == 0x0A)
            let request = try Request.decode(line: line.bytes.dropLast()).get()
            #expect(request.id == line.id)
            let part = try #require(request.part)
            #expect(part == SavePart(index: index, count: parts.count))
            guard case .save(let piece) = request.operation else {
                Issue.record("a part is not a save")
                continue
            }
            #expect(piece.author == (index == 0 ? "importer" : nil))
            switch assembly.receive(piece, part: part, bytes: line.bytes.count - 1, reserve: { _ in true }) {
            case .held(let held): #expect(held == index + 1)
            case .run(let whole, _): ran = whole
            case .refuse(let error, _): Issue.record("part \(index) refused: \(error)")
            }
        }
        #expect(ran == save)
        #expect(Set(parts.map(\.id)).count == parts.count)
    }

    @Test("a large save is sized from a sample: cut at once when surely too long, and still joined back exactly",
          arguments: [(2_000, 16_384), (1_200, 1 << 20)])
    func sampledSizing(rows: Int, maxLineBytes: Int) throws {
        // The sampled first changes are long and the rest short, so the guess is off either way.
        let save = SaveRequest(inserts: (0..<rows).map { Self.row($0, note: String(repeating: "z", count: $0 < SaveParts.sampleSize ? 400 : 10)) },
                               author: "sampled")
        let parts = try lines(save, maxLineBytes: maxLineBytes)
        var joined = SaveRequest()
        for (index, line) in parts.enumerated() {
            #expect(line.bytes.count - 1 <= maxLineBytes)
            let request = try Request.decode(line: line.bytes.dropLast()).get()
            #expect(request.part == (parts.count == 1 ? nil : SavePart(index: index, count: parts.count)))
            guard case .save(let piece) = request.operation else { continue }
            joined.append(piece)
        }
        #expect(joined == save)
        if maxLineBytes == 16_384 {
            #expect(parts.count > 5)
        } else {
            #expect(parts.count == 1)   // guessed short enough to write whole, and it fits
        }
    }

    @Test("one change longer than a line, or parts past the save's limit, throw before anything is sent")
    func refusals() throws {
        let huge = Self.row(1, note: String(repeating: "y", count: 5_000))
        let tooLong = #expect(throws: PGModelError.self) { try lines(SaveRequest(inserts: [Self.row(0), huge, Self.row(2)]), maxLineBytes: 4_096) }
        #expect(tooLong?.code == .lineTooLong)
        #expect(tooLong?.model == "Trip")
        let alone = #expect(throws: PGModelError.self) { try lines(SaveRequest(inserts: [huge]), maxLineBytes: 4_096) }
        #expect(alone?.code == .lineTooLong)

        let many = SaveRequest(inserts: (0..<200).map { Self.row($0) })
        let tooMuch = #expect(throws: PGModelError.self) { try lines(many, maxLineBytes: 4_096, maxSaveBytes: 10_000) }
        #expect(tooMuch?.code == .saveTooLarge)

        // A server that takes no parts gets the one line, and its own line_too_long.
        #expect(try lines(many, maxLineBytes: 4_096, maxSaveBytes: nil).count == 1)
    }

    @Test("even cuts differ by one change at most and cover every change once")
    func evenRanges() {
        for (count, parts) in [(10, 3), (7, 7), (5, 9), (1, 1), (1_000, 17)] {
            let ranges = SaveParts.evenRanges(count: count, parts: parts)
            #expect(ranges.count == min(count, parts))
            #expect(ranges.flatMap { Array($0) } == Array(0..<count))
            let sizes = ranges.map(\.count)
            #expect((sizes.max() ?? 0) - (sizes.min() ?? 0) <= 1)
        }
    }
}
