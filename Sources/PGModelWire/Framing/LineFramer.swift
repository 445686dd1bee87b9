import NIOCore

/// Splits a byte stream into protocol lines: a pure state machine, bytes in, frames out.
///
/// A line ends at `"\n"`; one `"\r"` before it is dropped, so CRLF clients work. A line longer than
/// ``maxLineBytes`` (not counting the `"\n"`) yields a single ``Frame/lineTooLong(limit:)`` as soon as the
/// limit is passed — without buffering the rest — and the framer resynchronises at the next `"\n"`.
///
/// ```swift
/// var framer = LineFramer(maxLineBytes: 1024)
/// framer.append(ByteBuffer(string: "{\"id\":1,\"op\":\"ping\"}\n{\"id\":2,"))
/// framer.next()   // .line(…"{\"id\":1,\"op\":\"ping\"}")
/// framer.next()   // nil: the second line is not complete yet
/// ```
@_spi(PGModelInternals) public struct LineFramer: Sendable {
    /// What the framer produces.
    public enum Frame: Hashable, Sendable {
        /// One line, without its `"\n"` (and without a `"\r"` before it).
        case line(ByteBuffer)
        /// A line passed `limit` bytes; its bytes are discarded up to and including the next `"\n"`.
        case lineTooLong(limit: Int)
    }

    /// The longest line accepted, in bytes, not counting the `"\n"`.
    public let maxLineBytes: Int

    private var buffer = ByteBuffer()
    /// How many readable bytes were already searched for `"\n"`, so chunked long lines are scanned once.
    private var scannedBytes = 0
    /// Inside an over-long line whose error was already reported.
    private var isDiscarding = false

    public init(maxLineBytes: Int = WireProtocol.defaultMaxLineBytes) {
        self.maxLineBytes = max(1, maxLineBytes)
    }

    /// Bytes received but not yet returned as a frame.
    public var bufferedByteCount: Int { buffer.readableBytes }

    /// Adds received bytes; call ``next()`` until it returns `nil` afterwards.
    public mutating func append(_ bytes: ByteBuffer) {
        reclaimSpace()
        var bytes = bytes
        buffer.writeBuffer(&bytes)
    }

    /// Adds received bytes; call ``next()`` until it returns `nil` afterwards.
    public mutating func append(contentsOf bytes: some Sequence<UInt8>) {
        reclaimSpace()
        buffer.writeBytes(bytes)
    }

    /// The next complete frame, or `nil` when more bytes are needed.
    public mutating func next() -> Frame? {
        while true {
            let view = buffer.readableBytesView
            let searchStart = view.index(view.startIndex, offsetBy: scannedBytes)
            guard let newline = view[searchStart...].firstIndex(of: UInt8(ascii: "\n")) else {
                scannedBytes = view.count
                if isDiscarding {
                    dropBuffered()
                    return nil
                }
                if view.count > maxLineBytes {
                    dropBuffered()
                    isDiscarding = true
                    return .lineTooLong(limit: maxLineBytes)
                }
                return nil
            }
            let length = view.distance(from: view.startIndex, to: newline)
            scannedBytes = 0
            if isDiscarding {
                buffer.moveReaderIndex(forwardBy: length + 1)
                isDiscarding = false
                continue
            }
            if length > maxLineBytes {
                buffer.moveReaderIndex(forwardBy: length + 1)
                return .lineTooLong(limit: maxLineBytes)
            }
            return .line(takeLine(length: length, separatorBytes: 1))
        }
    }

    /// Call at end of input: the last line when it lacked a `"\n"`, else `nil`.
    public mutating func finish() -> Frame? {
        defer {
            dropBuffered()
            isDiscarding = false
        }
        guard !isDiscarding, buffer.readableBytes > 0 else { return nil }
        return .line(takeLine(length: buffer.readableBytes, separatorBytes: 0))
    }

    private mutating func takeLine(length: Int, separatorBytes: Int) -> ByteBuffer {
        var line = buffer.getSlice(at: buffer.readerIndex, length: length) ?? ByteBuffer()
        buffer.moveReaderIndex(forwardBy: length + separatorBytes)
        if line.readableBytesView.last == UInt8(ascii: "\r") {
            line.moveWriterIndex(to: line.writerIndex - 1)
        }
        return line
    }

    private mutating func dropBuffered() {
        buffer.moveReaderIndex(to: buffer.writerIndex)
        scannedBytes = 0
    }

    private mutating func reclaimSpace() {
        if buffer.readableBytes == 0 {
            buffer.clear()
        } else if buffer.readerIndex >= 64 * 1024 {
            buffer.discardReadBytes()
        }
    }
}
