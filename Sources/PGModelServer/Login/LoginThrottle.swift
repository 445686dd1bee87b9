@_spi(PGModelInternals) import PGModelWire
/// Slows password guessing across connections, without sockets or clocks: the server asks it before
/// checking a `hello` and tells it the outcome afterwards.
///
/// Two counters, each with its own free allowance and exponential back-off:
/// - per **client address** (a guesser cannot reset it by reconnecting);
/// - per **user name** (a guesser cannot escape it by changing addresses), with a short cap so that a
///   stranger guessing a real user's password delays that user by at most ``Policy/maximumUserDelay``.
///   An address the user logged in from successfully within ``Policy/trustedAddressWindow`` skips the
///   user-name counter, so a real user on a known address is never held back by someone else's guesses.
///
/// Counters are forgotten ``Policy/forgetAfter`` after their last failure, and at most
/// ``Policy/maximumEntries`` of each kind are kept (the oldest go first), so memory stays bounded under
/// a flood of made-up names.
///
/// ```swift
/// var throttle = LoginThrottle()
/// if case .throttled(let retryAfter) = throttle.check(user: "bob", address: "10.0.0.7", now: .now) { … }
/// throttle.recordFailure(user: "bob", address: "10.0.0.7", now: .now)
/// ```
public struct LoginThrottle: Sendable {
    /// When the back-off starts and how long it grows.
    public struct Policy: Sendable, Hashable {
        /// Failed logins per user name before the back-off starts.
        public var freeFailuresPerUser: Int = 5
        /// Failed logins per client address before the back-off starts.
        public var freeFailuresPerAddress: Int = 20
        /// The first back-off; each further failure doubles it.
        public var initialDelay: Duration = .seconds(1)
        /// The longest a user name is held back (kept short: anyone may fail logins for any name).
        public var maximumUserDelay: Duration = .seconds(30)
        /// The longest a client address is held back.
        public var maximumAddressDelay: Duration = .seconds(300)
        /// How long a successful login makes its address trusted for that user name.
        public var trustedAddressWindow: Duration = .seconds(24 * 3600)
        /// A counter without failures for this long starts again from zero.
        public var forgetAfter: Duration = .seconds(900)
        /// The most counters (and trusted pairs) of each kind kept in memory.
        public var maximumEntries: Int = 10_000

        public init() {}

        /// No throttling at all (tests that log in wrongly on purpose, many times).
        public static var disabled: Policy {
            var policy = Policy()
            policy.freeFailuresPerUser = .max
            policy.freeFailuresPerAddress = .max
            return policy
        }
    }

    /// Whether a login may be checked now.
    @_spi(PGModelInternals) public enum Verdict: Hashable, Sendable {
        case allowed
        /// Not before `retryAfter` from now; the password is not checked.
        case throttled(retryAfter: Duration)
    }

    private struct Counter: Sendable {
        var failures: Int
        var lastFailure: ContinuousClock.Instant
        var blockedUntil: ContinuousClock.Instant
    }

    private struct TrustedPair: Hashable, Sendable {
        var user: String
        var address: String
    }

    /// The rules in force.
    @_spi(PGModelInternals) public let policy: Policy
    private var users: [String: Counter] = [:]
    private var addresses: [String: Counter] = [:]
    private var trusted: [TrustedPair: ContinuousClock.Instant] = [:]

    @_spi(PGModelInternals) public init(policy: Policy = Policy()) {
        self.policy = policy
    }

    /// Whether a `hello` for `user` from `address` may be checked at `now`.
    @_spi(PGModelInternals) public func check(user: String, address: String, now: ContinuousClock.Instant) -> Verdict {
        var until: ContinuousClock.Instant?
        if let counter = addresses[address], counter.blockedUntil > now { until = counter.blockedUntil }
        if !isTrusted(user: user, address: address, now: now), let counter = users[user], counter.blockedUntil > now {
            until = max(until ?? counter.blockedUntil, counter.blockedUntil)
        }
        guard let until else { return .allowed }
        return .throttled(retryAfter: until - now)
    }

    /// A `hello` for `user` from `address` had wrong credentials.
    @_spi(PGModelInternals) public mutating func recordFailure(user: String, address: String, now: ContinuousClock.Instant) {
        Self.fail(&addresses, address, free: policy.freeFailuresPerAddress, maximum: policy.maximumAddressDelay, policy: policy, now: now)
        if !isTrusted(user: user, address: address, now: now) {
            Self.fail(&users, user, free: policy.freeFailuresPerUser, maximum: policy.maximumUserDelay, policy: policy, now: now)
        }
        prune(now: now)
    }

    /// A `hello` for `user` from `address` succeeded: the address is cleared and trusted for `user`.
    ///
    /// The user name's counter is left alone: the guesser may be somewhere else.
    @_spi(PGModelInternals) public mutating func recordSuccess(user: String, address: String, now: ContinuousClock.Instant) {
        addresses[address] = nil
        trusted[TrustedPair(user: user, address: address)] = now
        prune(now: now)
    }

    /// How many counters and trusted pairs are held (for tests of the memory bound).
    @_spi(PGModelInternals) public var entryCount: Int { users.count + addresses.count + trusted.count }

    private func isTrusted(user: String, address: String, now: ContinuousClock.Instant) -> Bool {
        guard let since = trusted[TrustedPair(user: user, address: address)] else { return false }
        return now - since < policy.trustedAddressWindow
    }

    private static func fail(
        _ counters: inout [String: Counter], _ key: String, free: Int, maximum: Duration, policy: Policy,
        now: ContinuousClock.Instant
    ) {
        var counter = counters[key] ?? Counter(failures: 0, lastFailure: now, blockedUntil: now)
        if now - counter.lastFailure >= policy.forgetAfter { counter.failures = 0 }
        counter.failures = counter.failures == .max ? .max : counter.failures + 1
        counter.lastFailure = now
        if counter.failures > free {
            // 1, 2, 4, … times the initial delay; the exponent is capped so the doubling cannot overflow.
            let exponent = min(counter.failures - free - 1, 20)
            let delay = min(policy.initialDelay * (1 << exponent), maximum)
            counter.blockedUntil = now + delay
        }
        counters[key] = counter
    }

    private mutating func prune(now: ContinuousClock.Instant) {
        let limit = max(1, policy.maximumEntries)
        let forget = policy.forgetAfter
        if users.count > limit {
            users = users.filter { now - $0.value.lastFailure < forget || $0.value.blockedUntil > now }
            Self.dropOldest(&users, keeping: limit)
        }
        if addresses.count > limit {
            addresses = addresses.filter { now - $0.value.lastFailure < forget || $0.value.blockedUntil > now }
            Self.dropOldest(&addresses, keeping: limit)
        }
        if trusted.count > limit {
            let window = policy.trustedAddressWindow
            trusted = trusted.filter { now - $0.value < window }
            if trusted.count > limit {
                let keep = trusted.sorted { $0.value > $1.value }.prefix(limit * 3 / 4)
                trusted = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
            }
        }
    }

    private static func dropOldest(_ counters: inout [String: Counter], keeping limit: Int) {
        guard counters.count > limit else { return }
        // Down to three quarters, so a flood of new names sorts once per many failures, not at each.
        let keep = counters.sorted { $0.value.lastFailure > $1.value.lastFailure }.prefix(limit * 3 / 4)
        counters = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
    }
}
