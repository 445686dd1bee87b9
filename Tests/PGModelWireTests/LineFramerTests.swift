import NIOCore
import Testing

@_spi(PGModelInternals) @testable import PGModelWire

@Suite("LineFramer")
struct LineFramerTests {
    /// Feeds `input` in chunks of the given sizes (cycling), collecting frames as text; `nil` for line_too_long.
    static func frames(_ input: String, chunks: [Int], max: Int = 1 << 20, finish: Bool = false) -> [String?] {
        var framer = LineFramer(maxLineBytes: max)
        let bytes = Array(input.utf8)
        var out: [String?] = []
        var position = 0
        var chunkIndex = 0
        while position < bytes.count {
            let size = Swift.max(1, chunks[chunkIndex % chunks.count])
            chunkIndex += 1
            let end = Swift.min(bytes.count, position + size)
            framer.append(contentsOf: bytes[position..<end])
            position = end
            while let frame = framer.next() { out.append(text(frame)) }
        }
        if finish, let last = framer.finish() { out.append(text(last)) }
        return out
    }

    static func text(_ frame: LineFramer.Frame) -> String? {
        switch frame {
        case .line(let buffer): return String(buffer: buffer)
        case .lineTooLong: return nil
        }
    }

    static let chunkings: [[Int]] = [[1], [2], [3, 1, 7], [5], [64], [1_000_000]]

    @Test("lines come out whole whatever the chunking", arguments: chunkings)
    func chunked(chunks: [Int]) {
        let input = "{\"id\":1,\"op\":\"ping\"}\n{\"id\":2}\r\n\nlast one\n"
        #expect(Self.frames(input, chunks: chunks) == ["{\"id\":1,\"op\":\"ping\"}", "{\"id\":2}", "", "last one"])
    }

    @Test("UTF-8 split across chunks is reassembled byte for byte", arguments: chunkings)
    func utf8(chunks: [Int]) {
        #expect(Self.frames("Zürich → 東京\n", chunks: chunks) == ["Zürich → 東京"])
    }

    @Test("an over-long line yields exactly one error, then the framer resyncs", arguments: chunkings)
    func oversized(chunks: [Int]) {
        let long = String(repeating: "x", count: 50)
        let input = "ok1\n\(long)\nok2\n\(long)\(long)\nok3\n"
        #expect(Self.frames(input, chunks: chunks, max: 10) == ["ok1", nil, "ok2", nil, "ok3"])
    }

    @Test("a line of exactly the limit passes; one byte more does not")
    func boundary() {
        #expect(Self.frames("0123456789\n", chunks: [1], max: 10) == ["0123456789"])
        #expect(Self.frames("0123456789A\nok\n", chunks: [1], max: 10) == [nil, "ok"])
        #expect(Self.frames("0123456789A\nok\n", chunks: [100], max: 10) == [nil, "ok"])
    }

    @Test("the error comes as soon as the limit is passed, before the newline arrives")
    func earlyError() {
        var framer = LineFramer(maxLineBytes: 8)
        framer.append(contentsOf: Array("123456789".utf8))
        #expect(framer.next() == .lineTooLong(limit: 8))
        #expect(framer.bufferedByteCount == 0, "the over-long line is not buffered")
        framer.append(contentsOf: Array(String(repeating: "y", count: 100).utf8))
        #expect(framer.next() == nil, "no second error for the same line")
        #expect(framer.bufferedByteCount == 0)
        framer.append(contentsOf: Array("yy\nnext\n".utf8))
        #expect(framer.next().flatMap(Self.text) == "next")
        #expect(framer.next() == nil)
    }

    @Test("finish returns a last line without newline, but not the tail of an over-long line")
    func finish() {
        #expect(Self.frames("a\nb", chunks: [1], finish: true) == ["a", "b"])
        #expect(Self.frames("a\n", chunks: [1], finish: true) == ["a"])
        #expect(Self.frames("a\n" + String(repeating: "z", count: 20), chunks: [3], max: 5, finish: true) == ["a", nil])
    }

    @Test("many lines in one chunk and a long line in many chunks")
    func volume() {
        let lines = (0..<500).map { "line \($0)" }
        #expect(Self.frames(lines.joined(separator: "\n") + "\n", chunks: [1_000_000]) == lines)
        let big = String(repeating: "b", count: 200_000)
        #expect(Self.frames(big + "\nend\n", chunks: [4096]) == [big, "end"])
    }

    @Test("ByteBuffer input works like byte sequences")
    func byteBuffer() {
        var framer = LineFramer()
        framer.append(ByteBuffer(string: "a\nb"))
        framer.append(ByteBuffer(string: "c\n"))
        #expect(framer.next() == .line(ByteBuffer(string: "a")))
        #expect(framer.next() == .line(ByteBuffer(string: "bc")))
        #expect(framer.next() == nil)
    }
}
