import NIOCore
@_spi(PGModelInternals) import PGModelWire

/// A request line and when the server read it: a client's `timeoutMs` counts from then, so a request
/// that waited behind the connection's earlier ones does not get a fresh deadline when it starts.
/// ``FrameInbox`` stamps each line as it reads it.
///
/// ```swift
/// while let received = try await inbox.next() { print(received.received) }
/// ```
struct ReceivedFrame: Sendable {
    var frame: LineFramer.Frame
    var received: NIODeadline
}
