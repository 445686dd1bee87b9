@_spi(PGModelInternals) import PGModelWire
/// Decides, without sockets, how a connection's incoming lines reach the one task that reads them: in
/// order, one at a time, with the socket's reads held while too many wait (back-pressure: a client that
/// pipelines without end is slowed by TCP flow control, not buffered in the server's memory).
///
/// A line that arrives while the task waits goes to it at once; otherwise it is buffered. The end of the
/// input (the peer closed or half-closed, or the channel failed) comes after the buffered lines; a
/// cancelled reader gets nothing more.
///
/// ```swift
/// var inbox = InboxStateMachine<String>(lowWatermark: 2, highWatermark: 4)
/// if case .deliver = inbox.received("line") { … }   // the channel read a line: wake the reader with it
/// switch inbox.next() {                             // the reader wants one
/// case .element(let line, let resumeReading): …
/// case .wait: …                                     // woken by a later `received` or `finish`
/// case .end(let end): …
/// }
/// ```
@_spi(PGModelInternals) public struct InboxStateMachine<Element> {
    /// How the input ended.
    public enum End {
        /// The peer closed (or half-closed) its side, or the reader was cancelled.
        case closed
        /// The channel failed.
        case failed(any Error)
    }

    /// What the channel does with a line it read.
    public enum ReceiveAction {
        /// Hand it to the reader, which waits.
        case deliver
        /// Buffered; nothing to do.
        case buffered
        /// Nobody reads any more: dropped.
        case dropped
    }

    /// What the reader gets when it asks for the next line.
    public enum NextAction {
        /// The next line; with `resumeReading`, the channel's held read must now be issued.
        case element(Element, resumeReading: Bool)
        /// Nothing yet: the reader waits, and a later ``received(_:)`` or ``finish(_:)`` wakes it.
        case wait
        /// No more lines.
        case end(End)
    }

    /// What ``finish(_:)`` asks for.
    public enum FinishAction {
        /// Wake the waiting reader with the end.
        case wake(End)
        /// Nothing.
        case none
    }

    private var buffer: [Element] = []
    private var head = 0
    private var isWaiting = false
    private var end: End?
    private var readHeld = false
    private let lowWatermark: Int
    private let highWatermark: Int

    /// Holds the socket's reads once `highWatermark` lines wait, and issues them again when no more than
    /// `lowWatermark` do.
    public init(lowWatermark: Int, highWatermark: Int) {
        self.highWatermark = max(1, highWatermark)
        self.lowWatermark = min(max(0, lowWatermark), self.highWatermark - 1)
    }

    /// Lines waiting for the reader.
    public var buffered: Int { buffer.count - head }

    /// Whether the channel holds a read back.
    public var isReadHeld: Bool { readHeld }

    /// The channel read `element`.
    public mutating func received(_ element: Element) -> ReceiveAction {
        if end != nil { return .dropped }
        if isWaiting {
            isWaiting = false
            return .deliver
        }
        buffer.append(element)
        return .buffered
    }

    /// The channel wants to read more: whether it may (false holds the read until the reader catches up).
    public mutating func mayRead() -> Bool {
        guard end == nil, buffered >= highWatermark else { return true }
        readHeld = true
        return false
    }

    /// The reader asks for the next line.
    public mutating func next() -> NextAction {
        if head < buffer.count {
            let element = buffer[head]
            head += 1
            if head == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64, head * 2 >= buffer.count {
                buffer.removeFirst(head)
                head = 0
            }
            let resume = readHeld && buffered <= lowWatermark
            if resume { readHeld = false }
            return .element(element, resumeReading: resume)
        }
        if let end { return .end(end) }
        isWaiting = true
        return .wait
    }

    /// The input ended (`.closed`, `.failed`): the reader gets the buffered lines first, then the end.
    /// A second end is ignored.
    public mutating func finish(_ reason: End) -> FinishAction {
        guard end == nil else { return .none }
        end = reason
        guard isWaiting else { return .none }
        isWaiting = false
        return .wake(reason)
    }

    /// The reader is cancelled: it gets nothing more, buffered lines included. Returns what to do, and
    /// whether the channel's held read must now be issued (nothing holds reads back any more).
    public mutating func cancel() -> (FinishAction, resumeReading: Bool) {
        buffer.removeAll()
        head = 0
        let resume = readHeld
        readHeld = false
        if end == nil { end = .closed }
        guard isWaiting else { return (.none, resume) }
        isWaiting = false
        return (.wake(.closed), resume)
    }
}
