import NIOCore

/// The NIO face of ``LineFramer``: put `ByteToMessageHandler(LineFrameDecoder())` in a pipeline and
/// the next handler receives ``LineFramer/Frame`` values.
///
/// ```swift
/// try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(maxLineBytes: 1 << 20)))
/// ```
@_spi(PGModelInternals) public struct LineFrameDecoder: ByteToMessageDecoder {
    public typealias InboundOut = LineFramer.Frame

    private var framer: LineFramer

    public init(maxLineBytes: Int = WireProtocol.defaultMaxLineBytes) {
        framer = LineFramer(maxLineBytes: maxLineBytes)
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        framer.append(buffer)
        buffer.moveReaderIndex(to: buffer.writerIndex)
        while let frame = framer.next() {
            context.fireChannelRead(wrapInboundOut(frame))
        }
        return .needMoreData
    }

    public mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
    ) throws -> DecodingState {
        _ = try decode(context: context, buffer: &buffer)
        if seenEOF, let last = framer.finish() {
            context.fireChannelRead(wrapInboundOut(last))
        }
        return .needMoreData
    }
}
