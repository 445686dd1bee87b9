import NIOConcurrencyHelpers
import NIOCore
@_spi(PGModelInternals) import PGModelWire

/// Splits a connection's bytes into request lines (``LineFramer``) and hands them to its task, one at a
/// time, each stamped with when it was read; the pipeline's last handler (``InboxStateMachine`` decides).
///
/// It stands in for `ByteToMessageHandler` and the inbound side of `NIOAsyncChannel`, whose writer the
/// connection still uses: a line that arrives while the task waits resumes it straight from
/// `channelRead`, without the async sequence's buffering and generic machinery, which
/// every short request would pay. Reads are held while `highWatermark` lines wait, as
/// `NIOAsyncChannel`'s back-pressure did. At the end of the input a last line without its `"\n"` still
/// counts, as `ByteToMessageHandler`'s `decodeLast` made it.
///
/// ```swift
/// let inbox = FrameInbox(eventLoop: channel.eventLoop, maxLineBytes: 1 << 20, lowWatermark: 2, highWatermark: 4)
/// try channel.pipeline.syncOperations.addHandler(inbox)
/// while let received = try await inbox.next() { … }
/// ```
final class FrameInbox: ChannelDuplexHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private struct State {
        var machine: InboxStateMachine<ReceivedFrame>
        var waiting: UnsafeContinuation<ReceivedFrame?, any Error>?
    }

    private let state: NIOLockedValueBox<State>
    private let eventLoop: any EventLoop
    /// Set and used on the event loop only (`@unchecked Sendable` above), as is ``framer``.
    private var context: ChannelHandlerContext?
    private var framer: LineFramer

    init(eventLoop: any EventLoop, maxLineBytes: Int, lowWatermark: Int, highWatermark: Int) {
        self.eventLoop = eventLoop
        self.framer = LineFramer(maxLineBytes: maxLineBytes)
        self.state = NIOLockedValueBox(State(machine: InboxStateMachine(lowWatermark: lowWatermark, highWatermark: highWatermark)))
    }

    /// The next line, nil once the input has ended (the peer closed or half-closed it, or the task was
    /// cancelled); throws the channel's error after the lines read before it.
    func next() async throws -> ReceivedFrame? {
        // A line already waiting needs no continuation.
        if case .frame(let frame) = try take(nil) { return frame }
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { continuation in
                do {
                    switch try take(continuation) {
                    case .frame(let frame): continuation.resume(returning: frame)
                    case .end: continuation.resume(returning: nil)
                    case .waiting: break
                    }
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            let (waiting, resumeReading) = state.withLockedValue { state in
                let (action, resume) = state.machine.cancel()
                if case .wake = action { return (state.waiting.take(), resume) }
                return (nil, resume)
            }
            waiting?.resume(returning: nil)
            if resumeReading { read() }
        }
    }

    private enum Taken {
        case frame(ReceivedFrame)
        case end
        /// Stored to be resumed later, or (without a continuation) nothing ready.
        case waiting
    }

    /// What ``next()`` does under the lock. Without a continuation it only takes a line already there.
    private func take(_ continuation: UnsafeContinuation<ReceivedFrame?, any Error>?) throws -> Taken {
        let (action, resumeReading) = state.withLockedValue { state -> (InboxStateMachine<ReceivedFrame>.NextAction?, Bool) in
            if continuation == nil, state.machine.buffered == 0 { return (nil, false) }
            let action = state.machine.next()
            switch action {
            case .wait: state.waiting = continuation
            case .element(_, let resume): return (action, resume)
            case .end: break
            }
            return (action, false)
        }
        if resumeReading { read() }
        switch action {
        case nil, .wait?: return .waiting
        case .element(let frame, _)?: return .frame(frame)
        case .end(.closed)?: return .end
        case .end(.failed(let error))?: throw error
        }
    }

    /// Issues the read the state machine held back, on the event loop.
    private func read() {
        if eventLoop.inEventLoop {
            context?.read()
        } else {
            eventLoop.execute { self.context?.read() }
        }
    }

    private func finish(_ end: InboxStateMachine<ReceivedFrame>.End) {
        let waiting = state.withLockedValue { state -> UnsafeContinuation<ReceivedFrame?, any Error>? in
            guard case .wake = state.machine.finish(end) else { return nil }
            return state.waiting.take()
        }
        switch end {
        case .closed: waiting?.resume(returning: nil)
        case .failed(let error): waiting?.resume(throwing: error)
        }
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        finish(.closed)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        framer.append(unwrapInboundIn(data))
        let now = NIODeadline.now()
        while let frame = framer.next() { receive(ReceivedFrame(frame: frame, received: now)) }
    }

    private func receive(_ received: ReceivedFrame) {
        let waiting = state.withLockedValue { state -> UnsafeContinuation<ReceivedFrame?, any Error>? in
            guard case .deliver = state.machine.received(received) else { return nil }
            return state.waiting.take()
        }
        waiting?.resume(returning: received)
    }

    /// At the end of the input: the last line, if it lacked its `"\n"`.
    private func receiveLast() {
        if let last = framer.finish() { receive(ReceivedFrame(frame: last, received: .now())) }
    }

    func read(context: ChannelHandlerContext) {
        if state.withLockedValue({ $0.machine.mayRead() }) { context.read() }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // A half-closed client still gets the answers to what it sent before.
        if case ChannelEvent.inputClosed? = event as? ChannelEvent {
            receiveLast()
            finish(.closed)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        receiveLast()
        finish(.closed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failed(error))
        context.fireErrorCaught(error)
    }
}
