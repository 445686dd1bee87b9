import Foundation
import NIOCore
@_spi(PGModelInternals) import PGModelWire

/// The first handler of a TLS-only connection: it looks at the first byte the client sends. A TLS
/// client starts with a handshake record (0x16), and the handler steps aside; anything else is a
/// plain-text client, which gets one readable `tls_required` line (id null) and is closed — instead of
/// the TLS layer's silent close, or a hang while it waits for a handshake that never comes.
///
/// ```swift
/// try channel.pipeline.syncOperations.addHandler(PlaintextRefusal())
/// try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
/// ```
final class PlaintextRefusal: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The content type of a TLS handshake record, the first byte of every TLS connection.
    static let handshakeRecord: UInt8 = 0x16

    /// Set once a plain-text client has been answered: what else it sends is dropped.
    private var refused = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        let buffer = unwrapInboundIn(data)
        guard let first = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) else { return }
        if first == Self.handshakeRecord {
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        refused = true
        let error = WireError(.tlsRequired, "this server accepts only TLS connections: connect with pgmodels:// (or tls=true)")
        guard let line = try? Response(id: nil, error: error).encodedLine() else {
            context.close(promise: nil)
            return
        }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: line))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }
}
