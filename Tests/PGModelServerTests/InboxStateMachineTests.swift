@_spi(PGModelInternals) @testable import PGModelServer
import Testing

@_spi(PGModelInternals) @testable import PGModelWire

/// How a connection's lines reach its task (the server's `FrameInbox`): order, back-pressure, the end
/// of the input after what was read before it, and cancellation.
@Suite("Inbox state machine")
struct InboxStateMachineTests {
    private struct Failure: Error {}

    @Test("a line read while the reader waits goes to it; lines read before it asks are kept, in order")
    func deliversInOrder() {
        var inbox = InboxStateMachine<Int>(lowWatermark: 1, highWatermark: 4)
        guard case .wait = inbox.next() else { Issue.record("an empty inbox made its reader wait"); return }
        guard case .deliver = inbox.received(1) else { Issue.record("the waiting reader got the line"); return }
        guard case .buffered = inbox.received(2), case .buffered = inbox.received(3) else {
            Issue.record("lines read while nobody waits are kept")
            return
        }
        #expect(inbox.buffered == 2)
        guard case .element(2, false) = inbox.next(), case .element(3, false) = inbox.next() else {
            Issue.record("the kept lines came back in order")
            return
        }
        guard case .wait = inbox.next() else { Issue.record("an emptied inbox made its reader wait"); return }
    }

    @Test("reads are held at the high watermark and resumed once the reader is down to the low one")
    func holdsReadsAtTheHighWatermark() {
        var inbox = InboxStateMachine<Int>(lowWatermark: 2, highWatermark: 4)
        for line in 0..<3 {
            _ = inbox.received(line)
            let mayRead1 = inbox.mayRead()
            #expect(mayRead1, "reading goes on below the high watermark (\(line + 1) lines)")
        }
        _ = inbox.received(3)
        let mayRead2 = inbox.mayRead()
        #expect(!mayRead2, "four lines wait: the read is held")
        #expect(inbox.isReadHeld)
        guard case .element(0, false) = inbox.next() else { Issue.record("three lines left: still held"); return }
        guard case .element(1, true) = inbox.next() else { Issue.record("two lines left: the held read goes out"); return }
        #expect(!inbox.isReadHeld)
        guard case .element(2, false) = inbox.next() else { Issue.record("released once only"); return }
        let mayRead3 = inbox.mayRead()
        #expect(mayRead3)
    }

    @Test("the end comes after the lines read before it; a failure is thrown after them, and a second end is ignored")
    func endsAfterTheBufferedLines() {
        var closed = InboxStateMachine<Int>(lowWatermark: 1, highWatermark: 4)
        _ = closed.received(1)
        guard case .none = closed.finish(.closed) else { Issue.record("nobody waits: nothing to wake"); return }
        guard case .dropped = closed.received(2) else { Issue.record("nothing is kept after the end"); return }
        guard case .element(1, false) = closed.next(), case .end(.closed) = closed.next(), case .end(.closed) = closed.next() else {
            Issue.record("the line read before the end, then the end, for good")
            return
        }
        let mayRead4 = closed.mayRead()
        #expect(mayRead4, "reads are never held after the end (a TLS close still needs them)")

        var failed = InboxStateMachine<Int>(lowWatermark: 1, highWatermark: 4)
        guard case .wait = failed.next(), case .wake(.failed) = failed.finish(.failed(Failure())) else {
            Issue.record("a waiting reader is woken with the failure")
            return
        }
        guard case .none = failed.finish(.closed), case .end(.failed) = failed.next() else {
            Issue.record("the first end stands")
            return
        }
    }

    @Test("a cancelled reader gets nothing more, the kept lines included, and a held read is released")
    func cancelDropsEverything() {
        var inbox = InboxStateMachine<Int>(lowWatermark: 0, highWatermark: 2)
        _ = inbox.received(1)
        _ = inbox.received(2)
        let mayRead5 = inbox.mayRead()
        #expect(!mayRead5)
        let (action, resumeReading) = inbox.cancel()
        guard case .none = action else { Issue.record("nobody waited"); return }
        #expect(resumeReading)
        guard case .end(.closed) = inbox.next() else { Issue.record("nothing after the cancellation"); return }

        var waiting = InboxStateMachine<Int>(lowWatermark: 0, highWatermark: 2)
        _ = waiting.next()
        guard case (.wake(.closed), false) = waiting.cancel() else { Issue.record("the waiting reader is woken"); return }
    }

    @Test("watermarks are kept sane: at least one line before holding, the low one below the high one")
    func saneWatermarks() {
        var inbox = InboxStateMachine<Int>(lowWatermark: 9, highWatermark: 0)
        let mayRead6 = inbox.mayRead()
        #expect(mayRead6)
        _ = inbox.received(1)
        let mayRead7 = inbox.mayRead()
        #expect(!mayRead7, "a high watermark of 0 holds after one line")
        guard case .element(1, true) = inbox.next() else { Issue.record("released when empty"); return }
    }
}
