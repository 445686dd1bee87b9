@_spi(PGModelInternals) @testable import PGModelServer
import Testing

@_spi(PGModelInternals) @testable import PGModelWire

@Suite("LoginThrottle")
struct LoginThrottleTests {
    static let start = ContinuousClock.now

    static func policy(user: Int = 3, address: Int = 10) -> LoginThrottle.Policy {
        var policy = LoginThrottle.Policy()
        policy.freeFailuresPerUser = user
        policy.freeFailuresPerAddress = address
        return policy
    }

    @Test("a user name is held back after its free failures, from any address, with a doubling delay capped short")
    func perUserName() {
        var throttle = LoginThrottle(policy: Self.policy(user: 3))
        var now = Self.start
        for attempt in 0..<3 {
            #expect(throttle.check(user: "bob", address: "10.0.0.\(attempt)", now: now) == .allowed)
            throttle.recordFailure(user: "bob", address: "10.0.0.\(attempt)", now: now)
        }
        #expect(throttle.check(user: "bob", address: "10.0.0.9", now: now) == .allowed, "three free failures")
        throttle.recordFailure(user: "bob", address: "10.0.0.9", now: now)
        #expect(throttle.check(user: "bob", address: "10.0.0.50", now: now) == .throttled(retryAfter: .seconds(1)))
        #expect(throttle.check(user: "alice", address: "10.0.0.50", now: now) == .allowed, "other names are not affected")

        now += .seconds(1)
        throttle.recordFailure(user: "bob", address: "10.0.0.9", now: now)
        #expect(throttle.check(user: "bob", address: "10.0.0.1", now: now) == .throttled(retryAfter: .seconds(2)))
        for _ in 0..<20 { throttle.recordFailure(user: "bob", address: "10.0.0.\(Int.random(in: 100...200))", now: now) }
        #expect(throttle.check(user: "bob", address: "10.0.0.1", now: now) == .throttled(retryAfter: .seconds(30)),
                "a stranger can delay a real user by at most the user cap")
        #expect(throttle.check(user: "bob", address: "10.0.0.1", now: now + .seconds(30)) == .allowed)
    }

    @Test("an address is held back across user names, and reconnecting does not reset it")
    func perAddress() {
        var throttle = LoginThrottle(policy: Self.policy(user: 100, address: 4))
        for index in 0..<5 { throttle.recordFailure(user: "name\(index)", address: "192.0.2.7", now: Self.start) }
        #expect(throttle.check(user: "someone-new", address: "192.0.2.7", now: Self.start) == .throttled(retryAfter: .seconds(1)))
        #expect(throttle.check(user: "someone-new", address: "192.0.2.8", now: Self.start) == .allowed)
        for index in 0..<30 { throttle.recordFailure(user: "more\(index)", address: "192.0.2.7", now: Self.start) }
        #expect(throttle.check(user: "x", address: "192.0.2.7", now: Self.start) == .throttled(retryAfter: .seconds(300)))
    }

    @Test("an address the user logged in from skips the user-name counter; success there clears the address")
    func trustedAddress() {
        var throttle = LoginThrottle(policy: Self.policy(user: 2, address: 3))
        throttle.recordSuccess(user: "bob", address: "home", now: Self.start)
        for _ in 0..<10 { throttle.recordFailure(user: "bob", address: "attacker", now: Self.start) }
        #expect(throttle.check(user: "bob", address: "elsewhere", now: Self.start) != .allowed)
        #expect(throttle.check(user: "bob", address: "home", now: Self.start) == .allowed, "someone else's guesses do not lock bob out at home")

        for _ in 0..<3 { throttle.recordFailure(user: "bob", address: "home", now: Self.start) }
        throttle.recordSuccess(user: "bob", address: "home", now: Self.start)
        #expect(throttle.check(user: "carol", address: "home", now: Self.start) == .allowed)

        let later = Self.start + throttle.policy.trustedAddressWindow + .seconds(1)
        throttle.recordFailure(user: "bob", address: "attacker", now: later)
        throttle.recordFailure(user: "bob", address: "attacker", now: later)
        throttle.recordFailure(user: "bob", address: "attacker", now: later)
        #expect(throttle.check(user: "bob", address: "home", now: later) != .allowed, "trust expires")
    }

    @Test("failures are forgotten after a quiet period")
    func forgetting() {
        var throttle = LoginThrottle(policy: Self.policy(user: 2))
        for _ in 0..<3 { throttle.recordFailure(user: "bob", address: "a", now: Self.start) }
        #expect(throttle.check(user: "bob", address: "a", now: Self.start) != .allowed)
        let later = Self.start + throttle.policy.forgetAfter
        throttle.recordFailure(user: "bob", address: "a", now: later)
        #expect(throttle.check(user: "bob", address: "a", now: later) == .allowed, "the count started again")
    }

    @Test("a flood of made-up names and addresses keeps memory bounded")
    func boundedMemory() {
        var policy = Self.policy()
        policy.maximumEntries = 100
        var throttle = LoginThrottle(policy: policy)
        for index in 0..<5_000 {
            throttle.recordFailure(user: "name\(index)", address: "addr\(index)", now: Self.start + .milliseconds(index))
            throttle.recordSuccess(user: "ok\(index)", address: "addr\(index)", now: Self.start + .milliseconds(index))
        }
        #expect(throttle.entryCount <= 3 * 100)
    }

    @Test("disabled never throttles")
    func disabled() {
        var throttle = LoginThrottle(policy: .disabled)
        for _ in 0..<1_000 { throttle.recordFailure(user: "bob", address: "a", now: Self.start) }
        #expect(throttle.check(user: "bob", address: "a", now: Self.start) == .allowed)
    }
}

@Suite("LoginDeadlineStateMachine")
struct LoginDeadlineStateMachineTests {
    @Test("no hello by the deadline: close")
    func silent() {
        var login = LoginDeadlineStateMachine()
        #expect(login.deadlinePassed() == .close)
        #expect(login.state == .closed)
        #expect(login.deadlinePassed() == .none)
    }

    @Test("a hello still being checked at the deadline is not held against the client")
    func checkingAtTheDeadline() {
        var succeeding = LoginDeadlineStateMachine()
        succeeding.helloReceived()
        #expect(succeeding.deadlinePassed() == .none)
        #expect(succeeding.helloChecked(succeeded: true) == .none)
        #expect(succeeding.state == .loggedIn)

        var failing = LoginDeadlineStateMachine()
        failing.helloReceived()
        #expect(failing.deadlinePassed() == .none)
        #expect(failing.helloChecked(succeeded: false) == .close, "its answer is written, then the timeout line")
    }

    @Test("a failed hello before the deadline leaves the clock running; a later success stops it")
    func failedThenSucceeded() {
        var login = LoginDeadlineStateMachine()
        login.helloReceived()
        #expect(login.helloChecked(succeeded: false) == .none)
        #expect(login.state == .waitingForHello)
        login.helloReceived()
        #expect(login.helloChecked(succeeded: true) == .none)
        #expect(login.deadlinePassed() == .none)
        #expect(login.state == .loggedIn)
    }

    @Test("a hello answered without a check (server busy) restarts the clock, even past the deadline; nothing else does")
    func deferredHelloRestartsTheClock() {
        var login = LoginDeadlineStateMachine()
        login.helloReceived()
        #expect(login.deadlinePassed() == .none)
        let restarted = login.helloDeferred()
        #expect(restarted, "the timer starts anew")
        #expect(login.state == .waitingForHello)
        let again = login.helloDeferred()
        #expect(!again, "no hello is being checked")
        #expect(login.deadlinePassed() == .close, "the new timer still closes a client that then sends nothing")
        let afterClose = login.helloDeferred()
        #expect(!afterClose)
    }
}

/// The bound on logins checked or waiting at once.
@Suite("Login admission")
struct LoginAdmissionUnitTests {
    @Test("places up to the limit, none past it, and a place given back is taken again")
    func bound() {
        let admission = LoginAdmission(limit: 2)
        #expect(admission.enter())
        #expect(admission.enter())
        #expect(!admission.enter())
        #expect(admission.pendingCount == 2)
        admission.leave()
        #expect(admission.enter())
        #expect(!admission.enter())
    }

    @Test("a limit below one is one; leaving more than entered never goes below zero")
    func clamps() {
        let admission = LoginAdmission(limit: 0)
        #expect(admission.limit == 1)
        admission.leave()
        #expect(admission.pendingCount == 0)
        #expect(admission.enter())
        #expect(!admission.enter())
    }

    @Test("a busy login answer does not count as a failure: more of them than the limit leave the connection open")
    func busyIsNotAFailure() {
        var session = SessionStateMachine(maxFailedAuthentications: 2)
        let hello = HelloPayload(user: "a", password: "b")
        for attempt in 1...4 {
            let id = RequestID.int(Int64(attempt))
            #expect(session.receive(Request(id: id, operation: .hello(hello))) == .authenticate(id: id, hello: hello))
            #expect(session.authenticationNotChecked(id: id, error: LoginAdmission.busy) == .respond(Response(id: id, error: LoginAdmission.busy)))
            #expect(session.state == .unauthenticated)
        }
        #expect(LoginAdmission.busy.code == .serverBusy)
        #expect(session.authenticationNotChecked(id: 9, error: LoginAdmission.busy) == .ignore, "no hello is being checked")
    }
}
