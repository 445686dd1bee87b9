import Foundation
@_spi(PGModelInternals) import PGModelCore
@_spi(PGModelInternals) @testable import PGModelServer
import PGModelTestSupport
import Testing

@_spi(PGModelInternals) @testable import PGModelWire

@Suite("SessionStateMachine")
struct SessionStateMachineTests {
    static let alice = SessionUser(id: WireTest.userID, name: "alice")
    static let hello = HelloPayload(user: "alice", password: "pw")

    static func errorCode(_ action: SessionStateMachine.Action) -> PGModelError.Code? {
        switch action {
        case .respond(let response), .respondAndClose(let response):
            if case .failure(let error) = response.result { return error.code }
            return nil
        default:
            return nil
        }
    }

    @Test("requests before hello are refused with not_authenticated; ping and hello are not")
    func beforeHello() {
        var session = SessionStateMachine()
        for operation: Request.Operation in [.fetch(FetchRequest(entity: "T")), .count(FetchRequest(entity: "T")),
                                             .ids(FetchRequest(entity: "T")), .save(SaveRequest()),
                                             .register(SchemaDescription(entities: []))] {
            let action = session.receive(Request(id: 1, operation: operation))
            #expect(Self.errorCode(action) == .notAuthenticated)
            #expect(session.state == .unauthenticated)
        }
        #expect(session.receive(Request(id: 2, operation: .ping)) == .respond(Response(id: 2, .pong)))
        #expect(session.receive(Request(id: 3, operation: .hello(Self.hello))) == .authenticate(id: 3, hello: Self.hello))
        #expect(session.state == .authenticating)
    }

    @Test("a successful login answers hello and then dispatches requests as that user")
    func login() {
        var session = SessionStateMachine()
        _ = session.receive(Request(id: 1, operation: .hello(Self.hello)))
        #expect(session.authenticationSucceeded(id: 1, user: Self.alice)
            == .respond(Response(id: 1, .hello(HelloResult(user: "alice", userID: WireTest.userID)))))
        #expect(session.state == .authenticated(Self.alice))
        let fetch = Request(id: 2, operation: .fetch(FetchRequest(entity: "Trip")))
        #expect(session.receive(fetch) == .execute(fetch, user: Self.alice))
        #expect(session.receive(Request(id: 3, operation: .ping)) == .respond(Response(id: 3, .pong)))
    }

    @Test("a second hello on a logged-in connection is refused; the login stays")
    func secondHello() {
        var session = SessionStateMachine()
        _ = session.receive(Request(id: 1, operation: .hello(Self.hello)))
        _ = session.authenticationSucceeded(id: 1, user: Self.alice)
        let action = session.receive(Request(id: 2, operation: .hello(HelloPayload(user: "bob", password: "x"))))
        #expect(Self.errorCode(action) == .alreadyAuthenticated)
        #expect(session.state == .authenticated(Self.alice))
    }

    @Test("an unsupported protocol version is refused before any password check")
    func unsupportedProtocol() {
        var session = SessionStateMachine()
        let action = session.receive(Request(id: 1, operation: .hello(HelloPayload(user: "a", password: "b", protocolVersion: 2))))
        #expect(Self.errorCode(action) == .unsupportedProtocol)
        #expect(session.state == .unauthenticated)
    }

    @Test("failed logins answer the error and allow retries, until the limit closes the connection")
    func failedLogins() {
        var session = SessionStateMachine(maxFailedAuthentications: 3)
        let failure = WireError(.authenticationFailed, "wrong user name or password")
        for attempt in 1...2 {
            #expect(session.receive(Request(id: .int(Int64(attempt)), operation: .hello(Self.hello))) == .authenticate(id: .int(Int64(attempt)), hello: Self.hello))
            #expect(session.authenticationFailed(id: .int(Int64(attempt)), error: failure) == .respond(Response(id: .int(Int64(attempt)), error: failure)))
            #expect(session.state == .unauthenticated)
        }
        _ = session.receive(Request(id: 3, operation: .hello(Self.hello)))
        let last = session.authenticationFailed(id: 3, error: failure)
        guard case .respondAndClose(let response) = last else {
            Issue.record("the third failure should close, got \(last)")
            return
        }
        #expect(response.id == 3)
        #expect(Self.errorCode(last) == .authenticationFailed)
        #expect(session.state == .closed)
        #expect(session.receive(Request(id: 4, operation: .ping)) == .ignore)
    }

    @Test("a success after failures resets the failure count")
    func successResets() {
        var session = SessionStateMachine(maxFailedAuthentications: 2)
        _ = session.receive(Request(id: 1, operation: .hello(Self.hello)))
        _ = session.authenticationFailed(id: 1, error: WireError(.authenticationFailed, "no"))
        _ = session.receive(Request(id: 2, operation: .hello(Self.hello)))
        _ = session.authenticationSucceeded(id: 2, user: Self.alice)
        #expect(session.state == .authenticated(Self.alice))
    }

    @Test("bye answers and closes, from any state; afterwards everything is ignored")
    func bye() {
        var fresh = SessionStateMachine()
        #expect(fresh.receive(Request(id: 1, operation: .bye)) == .respondAndClose(Response(id: 1, .acknowledged)))
        #expect(fresh.state == .closed)
        #expect(fresh.receive(.failure(RequestDecodingFailure(id: nil, error: WireError(.malformedMessage, "x")))) == .ignore)
        #expect(fresh.receiveOversizedLine(limit: 10) == .ignore)

        var loggedIn = SessionStateMachine()
        _ = loggedIn.receive(Request(id: 1, operation: .hello(Self.hello)))
        _ = loggedIn.authenticationSucceeded(id: 1, user: Self.alice)
        #expect(loggedIn.receive(Request(id: 2, operation: .bye)) == .respondAndClose(Response(id: 2, .acknowledged)))
        #expect(loggedIn.receive(Request(id: 3, operation: .fetch(FetchRequest(entity: "T")))) == .ignore)
    }

    @Test("decoding failures and oversized lines are answered and keep the session usable")
    func errorsKeepSession() {
        var session = SessionStateMachine()
        let failure = RequestDecodingFailure(id: 4, error: WireError(.unknownOp, "unknown op 'x'"))
        #expect(session.receive(.failure(failure)) == .respond(Response(id: 4, error: failure.error)))
        #expect(Self.errorCode(session.receiveOversizedLine(limit: 10)) == .lineTooLong)
        #expect(session.state == .unauthenticated)
        #expect(session.receive(Request(id: 5, operation: .ping)) == .respond(Response(id: 5, .pong)))
    }

    @Test("authentication outcomes outside a login are ignored")
    func strayOutcomes() {
        var session = SessionStateMachine()
        #expect(session.authenticationSucceeded(id: 1, user: Self.alice) == .ignore)
        #expect(session.state == .unauthenticated, "no login without a hello")
        session.connectionClosed()
        #expect(session.state == .closed)
        #expect(session.authenticationFailed(id: 1, error: WireError(.authenticationFailed, "x")) == .ignore)
    }
}
