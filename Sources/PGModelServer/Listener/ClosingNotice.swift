import NIOCore
@_spi(PGModelInternals) import PGModelWire

/// The server's last word on a connection it closes by itself (login or idle timeout): one error line
/// with id `null`, then the socket closes. Best effort: a peer that is already gone gets nothing.
///
/// ```swift
/// await ClosingNotice(WireError(.timeout, "no request for 600 s")).send(on: outbound, closing: channel)
/// ```
struct ClosingNotice {
    let error: WireError

    init(_ error: WireError) {
        self.error = error
    }

    func send(on outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, closing channel: any Channel) async {
        if let line = try? Response(id: nil, error: error).encodedLine() {
            try? await outbound.write(ByteBuffer(bytes: line))
        }
        try? await channel.close()
    }
}
